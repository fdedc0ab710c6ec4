"""The context and multi-stage Dockerfile that tests/integration/test_build_peers.py builds with
kern build and podman build and compares, and that tests/bench/build_bench.py times: ARG and ENV
expansion, WORKDIR, COPY globs and .dockerignore, COPY --from, --chmod and --chown, a RUN that
deletes a file and a directory of the base image, a symlink, USER, LABEL, EXPOSE, CMD. No heredoc:
Debian's podman 4.3 (buildah 1.28) does not read them (test_build_peers.py tests them apart).
The RUN runs as root and deletes nothing in a directory of another owner (see
test_a_root_run_keeps_the_owner_of_a_directory_it_changes there)."""

import os

DOCKERFILE = r"""ARG BASE=busybox:latest
FROM ${BASE} AS build
ARG GREETING=hello
WORKDIR /src
COPY *.txt ./
COPY src/ ./src/
# The "compiler" of this image is sed: it turns greet.in into a program.
RUN set -e; \
    mkdir -p /out/bin; \
    sed -e "s/@GREETING@/$GREETING/" /src/src/greet.in > /out/bin/greet; \
    chmod 0755 /out/bin/greet; \
    cat /src/a.txt /src/b.txt > /out/joined

FROM busybox:latest
ENV APP_HOME=/app \
    MODE=release
ENV PATH=/app/bin:$PATH
WORKDIR $APP_HOME
COPY --from=build /out/ ./
COPY --chmod=0640 conf/app.conf /etc/app.conf
COPY --chown=nobody:nobody conf/ /srv/conf/
RUN rm -r /usr/bin/wget /home && echo "$MODE" > /app/mode && ln -s /app/bin/greet /app/hello \
    && mkdir -m 0700 /app/private
USER nobody
LABEL org.example.stage=final org.example.mode=$MODE
EXPOSE 8080/tcp
CMD ["greet"]
"""

CONTEXT = {
    "Dockerfile": DOCKERFILE,
    "a.txt": "alpha\n",
    "b.txt": "beta\n",
    "secret.txt": "do not ship\n",
    "src/greet.in": "#!/bin/sh\necho \"@GREETING@ from a $MODE build\"\n",
    "src/notes.md": "not named by *.txt\n",
    "conf/app.conf": "level=3\n",
    "conf/extra.conf": "x=1\n",
    ".dockerignore": "# the context's secrets stay out\nsecret.txt\n**/*.tmp\n",
    "junk.tmp": "x\n",
}


def write(ctx, files=None):
    """Writes the context (CONTEXT, or files: relative path -> text) under ctx."""
    for rel, text in (CONTEXT if files is None else files).items():
        p = os.path.join(ctx, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    return ctx
