# The Python driver: the program the warm kernel runs inside the box as
#   python3 -c "import sys;exec(compile(sys.argv[1],'<kern-driver>','exec'))" SOURCE
# so nothing has to be installed in the image. Runs in the box (the workload process).
#
# It reads cells from fd 3 ("K2 CELL_ID NBYTES\n" + code + "NONCE\n", the nonce 32 letters and
# digits, echoed back as its bytes), runs each in one persistent __main__ namespace, and reports
# the end of each cell on fd 4 (a SOCK_SEQPACKET socket) as {"nonce","rc","results"}. stdout and stderr are the workload's own pipes and carry output only.
# A cell's trailing bare expression, display(obj) calls and open matplotlib figures become mime
# bundles; an exception prints a traceback trimmed to the cell's own frames and gives rc 1;
# sys.exit(n) gives rc n. SIGINT is dropped between cells and raises KeyboardInterrupt inside one.
# Embedded in the kern binary at build time (runtime/kernel/embed_driver.cmake).
import os, sys, ast, builtins, json, socket, signal, types, linecache

def _kern_main():
    DRV = '<kern-driver>'
    CO_COROUTINE = 0x80
    FLAGS = getattr(ast, 'PyCF_ALLOW_TOP_LEVEL_AWAIT', 0)
    MAX = 60000
    MIMES = (('_repr_html_', 'text/html'), ('_repr_markdown_', 'text/markdown'),
             ('_repr_svg_', 'image/svg+xml'), ('_repr_png_', 'image/png'),
             ('_repr_jpeg_', 'image/jpeg'), ('_repr_json_', 'application/json'),
             ('_repr_latex_', 'text/latex'))
    req = os.fdopen(3, 'rb', buffering=1 << 16)
    os.set_inheritable(3, False)
    res = socket.socket(fileno=4)
    res.set_inheritable(False)
    os.environ.setdefault('MPLBACKEND', 'Agg')
    if 'MPLCONFIGDIR' not in os.environ:
        # matplotlib warns on every start when $HOME is not writable (an image's files are
        # not the box user's): give it a private directory instead.
        home = os.path.expanduser('~/.config/matplotlib')
        if not os.access(os.path.dirname(os.path.dirname(home)) or '/', os.W_OK):
            os.environ['MPLCONFIGDIR'] = '/tmp/.kern-matplotlib-%d' % os.getuid()
    import warnings
    warnings.filterwarnings('ignore', message='.*non-interactive')  # plt.show() under Agg
    sys.argv = ['']
    main = types.ModuleType('__main__')
    main.__dict__['__builtins__'] = builtins
    sys.modules['__main__'] = main
    ns = main.__dict__
    st = {'results': None, 'loop': None, 'in_cell': False}
    cache = {}  # cell source -> compiled code: a repeated cell is not compiled again

    def on_sigint(signum, frame):
        # One handler for the kernel's life (switching handlers per cell costs more than the
        # rest of a trivial cell): between cells an interrupt is dropped.
        if st['in_cell']:
            raise KeyboardInterrupt

    def b64(data):
        import base64
        return base64.b64encode(bytes(data)).decode('ascii')

    plain = (int, float, complex, str, bytes, bool, list, tuple, dict, set, frozenset, range)

    def bundle(o):
        if type(o) in plain:  # nothing richer to ask these for
            return {'text/plain': repr(o)}
        b = {}
        if not isinstance(o, type):
            mb = getattr(o, '_repr_mimebundle_', None)
            if callable(mb):
                try:
                    r = mb()
                    if isinstance(r, tuple):
                        r = r[0]
                    if isinstance(r, dict):
                        for k, v in r.items():
                            b[str(k)] = b64(v) if isinstance(v, (bytes, bytearray)) else v
                except Exception:
                    pass
            for meth, mime in MIMES:
                if mime in b:
                    continue
                f = getattr(o, meth, None)
                if not callable(f):
                    continue
                try:
                    r = f()
                except Exception:
                    continue
                if isinstance(r, tuple):
                    r = r[0]
                if r is None:
                    continue
                b[mime] = b64(r) if isinstance(r, (bytes, bytearray)) else r
        if 'text/plain' not in b:
            try:
                b['text/plain'] = repr(o)
            except Exception as e:
                b['text/plain'] = '<repr failed: %s>' % type(e).__name__
        return b

    def display(*objs, **kw):
        out = st['results']
        for o in objs:
            if out is None:
                print(repr(o))
            else:
                out.append(bundle(o))
    builtins.display = display

    def figures(out):
        plt = sys.modules.get('matplotlib.pyplot')
        if plt is None:
            return
        try:
            import io
            for num in plt.get_fignums():
                buf = io.BytesIO()
                plt.figure(num).savefig(buf, format='png', bbox_inches='tight')
                out.append({'image/png': b64(buf.getvalue()), 'text/plain': '<Figure %s>' % num})
            plt.close('all')
        except Exception as e:
            print('kern: figure capture failed: %s' % e, file=sys.__stderr__)

    def run_async(coro):
        import asyncio
        if st['loop'] is None:
            st['loop'] = asyncio.new_event_loop()
        asyncio.set_event_loop(st['loop'])
        return st['loop'].run_until_complete(coro)

    def exit_code(e):
        c = e.code
        if c is None:
            return 0
        if isinstance(c, int):
            return c & 0xff if c >= 0 else c & 0xff
        try:
            print(c, file=sys.stderr)
        except Exception:
            pass
        return 1

    def print_exc(e):
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == DRV:
            tb = tb.tb_next
        import traceback
        try:
            frames = [f for f in traceback.extract_tb(tb) if f.filename != DRV]
            text = ''.join(traceback.format_exception_only(type(e), e))
            if frames:
                text = ('Traceback (most recent call last):\n' +
                        ''.join(traceback.format_list(frames)) + text)
            ctx = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
            if ctx is not None:
                text = (''.join(traceback.format_exception(type(ctx), ctx, ctx.__traceback__)) +
                        ('\nThe above exception was the direct cause of the following exception:\n\n'
                         if e.__cause__ is not None else
                         '\nDuring handling of the above exception, another exception occurred:\n\n') + text)
        except Exception:
            text = '%s: %s\n' % (type(e).__name__, e)
        try:
            sys.stderr.write(text)
        except Exception:
            os.write(2, text.encode('utf-8', 'replace'))

    def flush():
        out, err = sys.stdout, sys.stderr
        if out is sys.__stdout__ and err is sys.__stderr__:
            try:
                out.flush()
            except Exception:
                pass
            try:
                err.flush()
            except Exception:
                pass
            return
        # The original streams too when a cell replaced them.
        for s in (out, err, sys.__stdout__, sys.__stderr__):
            try:
                s.flush()
            except Exception:
                pass

    def compiled(raw, cid):
        # A repeated cell reuses the code compiled on its first run, and that run's cell name
        # in tracebacks (its source lines stay in linecache). Keyed by the cell's bytes: a hit
        # decodes nothing.
        code = raw.decode('utf-8', 'surrogateescape')
        fn = '<cell-%s>' % cid.decode('ascii')
        linecache.cache[fn] = (len(code), None, code.splitlines(True), fn)
        tree = compile(code, fn, 'exec', ast.PyCF_ONLY_AST | FLAGS)
        body = last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = compile(ast.Expression(tree.body.pop().value), fn, 'eval', FLAGS)
        if tree.body:
            body = compile(tree, fn, 'exec', FLAGS)
        if len(cache) >= 256:
            cache.clear()
        cache[raw] = hit = (body, last)
        return hit

    def run_cell(raw, cid):
        out = []
        st['results'] = out
        rc = 0
        try:
            st['in_cell'] = True
            hit = cache.get(raw)
            body, last = hit if hit is not None else compiled(raw, cid)
            if body is not None:
                if body.co_flags & CO_COROUTINE:
                    run_async(eval(body, ns))
                else:
                    exec(body, ns)
            if last is not None:
                v = eval(last, ns)
                if last.co_flags & CO_COROUTINE:
                    v = run_async(v)
                if v is not None:
                    ns['_'] = v
                    out.append({'text/plain': repr(v)} if type(v) in plain else bundle(v))
        except SystemExit as e:
            rc = exit_code(e)
        except BaseException as e:
            rc = 1
            print_exc(e)
        finally:
            st['in_cell'] = False
        if 'matplotlib.pyplot' in sys.modules:
            figures(out)
        flush()
        st['results'] = None
        return rc, out

    enc = json.JSONEncoder(ensure_ascii=False, default=repr)
    esc = json.encoder.encode_basestring  # a JSON string literal, ensure_ascii off (C)

    def end_message(nonce, rc, out):
        # The usual end of a cell (results of str: str bundles) written by hand, keys sorted (as
        # the supervisor keeps them): a third of the encoder's time. None for anything else.
        parts = []
        for b in out:
            if type(b) is not dict:
                return None
            if len(b) == 1:
                [(k, v)] = b.items()
                if type(k) is not str or type(v) is not str:
                    return None
                parts.append('{' + esc(k) + ':' + esc(v) + '}')
                continue
            items = []
            for k in sorted(b):
                v = b[k]
                if type(k) is not str or type(v) is not str:
                    return None
                items.append(esc(k) + ':' + esc(v))
            parts.append('{' + ','.join(items) + '}')
        return ('{"nonce":' + esc(nonce) + ',"rc":%d,"results":[' % rc + ','.join(parts) + ']}').encode('utf-8', 'replace')

    def send(obj, data=None):
        try:
            if data is None:
                data = enc.encode(obj).encode('utf-8', 'replace')
        except Exception as e:
            data = json.dumps({'nonce': obj.get('nonce'), 'rc': obj.get('rc', 1), 'results': [],
                               'error': 'results are not serialisable: %s' % e}).encode()
        if len(data) <= MAX:
            res.send(b'W' + data)  # one packet
            return
        mv = memoryview(data)
        res.sendmsg([b'S', mv[:MAX]])
        i = MAX
        while len(data) - i > MAX:
            res.sendmsg([b'M', mv[i:i + MAX]])
            i += MAX
        res.sendmsg([b'E', mv[i:]])

    signal.signal(signal.SIGINT, on_sigint)
    send({'ready': True, 'lang': 'python', 'version': sys.version.split()[0], 'pid': os.getpid()})
    readline, read = req.readline, req.read
    # The usual ends (rc 0 with no result, or with one text/plain string), put together as bytes.
    W_NONCE, RC0_NONE = b'W{"nonce":"', b'","rc":0,"results":[]}'
    RC0_PLAIN, PLAIN_END = b'","rc":0,"results":[{"text/plain":', b'}]}'
    while True:
        hdr = readline()
        if not hdr:
            os._exit(0)
        try:
            magic, cid, n = hdr.split()
            raw = read(int(n))
            nonce = readline().strip()
            # The nonce goes back as it came: letters and digits only (the supervisor's are hex).
            if magic != b'K2' or len(nonce) != 32 or not nonce.isalnum() or not cid.isascii():
                raise ValueError(magic)
        except Exception:
            os._exit(70)
        rc, out = 1, []
        try:
            rc, out = run_cell(raw, cid)
        except BaseException:  # an interrupt that landed between the cell and its report
            st['in_cell'] = False
            flush()
        if rc == 0:
            if not out:
                res.send(W_NONCE + nonce + RC0_NONE)
                continue
            if len(out) == 1:
                b = out[0]
                if type(b) is dict and len(b) == 1:
                    v = b.get('text/plain')
                    if type(v) is str:
                        msg = W_NONCE + nonce + RC0_PLAIN + esc(v).encode('utf-8', 'replace') + PLAIN_END
                        if len(msg) <= MAX + 1:
                            res.send(msg)
                            continue
        nonce = nonce.decode('ascii')
        try:
            msg = end_message(nonce, rc, out)
        except Exception:
            msg = None  # the encoder's way, with its error handling
        if msg is not None and len(msg) <= MAX:
            res.send(b'W' + msg)  # the usual end: one packet
        else:
            send({'nonce': nonce, 'rc': rc, 'results': out}, msg)

_kern_main()
