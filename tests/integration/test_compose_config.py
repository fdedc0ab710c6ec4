"""kern compose config, as the unprivileged user (kern-compose(1)): the example stacks of
tests/integration/compose print in the shape of `docker compose config` (YAML and JSON), the
warnings go to stderr as `kern: warning: ` lines, --services and --volumes list names, -q
validates only, and a bad file is a `kern: error: ` naming the file, line and key (exit 125)."""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

STACKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compose")


class ComposeConfigTest(kerntest.KernTestCase):

    def stack(self, name):
        return os.path.join(STACKS, name, "compose.yaml")

    def scratch(self, files):
        d = tempfile.mkdtemp(prefix="kern-compose-")
        os.chmod(d, 0o755)
        self.addCleanup(shutil.rmtree, d, True)
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(d, name), 0o644)
        return d

    def test_a_stack_prints_in_the_long_syntax(self):
        run = self.kern("compose", "-f", self.stack("webapp"), "config")
        self.assertExit(run, 0)
        self.assertEqual(run.err, "", run.describe())
        self.assertTrue(run.out.startswith("name: webapp\nservices:\n  store:\n"), run.describe())
        for needle in ("      - mode: ingress\n        target: 8000\n        published: \"8000\"\n        protocol: tcp\n",
                       "    depends_on:\n      store:\n        condition: service_started\n        required: true\n",
                       "      GREETING_FROM: compose\n"):
            self.assertIn(needle, run.out, run.describe())

    def test_json_services_volumes_and_quiet(self):
        run = self.kern("compose", "-f", self.stack("volumes_secrets"), "config", "--format", "json")
        self.assertExit(run, 0)
        doc = json.loads(run.out)
        self.assertEqual(doc["volumes"]["data"]["name"], "volumes_secrets_data")
        self.assertEqual(doc["services"]["reader"]["ports"][0]["target"], 8080)
        self.assertEqual(doc["secrets"]["db_password"]["file"],
                         os.path.join(STACKS, "volumes_secrets", "secrets", "db_password.txt"))
        run = self.kern("compose", "-f", self.stack("anchors"), "--profile", "debug", "config", "--services")
        self.assertExit(run, 0)
        self.assertEqual(run.out.split(), ["api", "helper", "debug"])
        run = self.kern("compose", "-f", self.stack("volumes_secrets"), "config", "--volumes")
        self.assertEqual(run.out.split(), ["data", "backup"])
        run = self.kern("compose", "-f", self.stack("healthy"), "config", "-q")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "")
        self.assertEqual(run.err, "kern: warning: version: obsolete, ignored\n", run.describe())

    def test_unknown_keys_warn_with_their_path(self):
        d = self.scratch({"compose.yaml": "services:\n  web:\n    image: busybox:latest\n    privileged: true\n"
                                          "    networks: [front]\n"})
        run = self.kern("compose", "--project-directory", d, "config", "--services")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "web\n")
        self.assertIn("kern: warning: services.web.privileged: not supported by kern, ignored\n", run.err)
        self.assertIn("kern: warning: services.web.networks: kern runs a stack in one shared network namespace",
                      run.err)

    def test_errors_name_the_file_line_and_key(self):
        d = self.scratch({"compose.yaml": "services:\n  web:\n    image: busybox:latest\n    ports: 5\n"})
        run = self.kern("compose", "-f", os.path.join(d, "compose.yaml"), "config")
        self.assertKernError(run, os.path.join(d, "compose.yaml") + ":4: services.web.ports: must be a list")
        d = self.scratch({"compose.yaml": "services:\n  a:\n    image: busybox:latest\n    expose: ['80']\n"
                                          "  b:\n    image: busybox:latest\n    ports: ['8080:80']\n"})
        run = self.kern("compose", "-f", os.path.join(d, "compose.yaml"), "config", "-q")
        self.assertKernError(run, "services \"a\" and \"b\" both listen on container port 80/tcp")
        run = self.kern("compose", "--project-directory", self.scratch({}), "config")
        self.assertKernError(run, "no compose file in")


if __name__ == "__main__":
    kerntest.main()
