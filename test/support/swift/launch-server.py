"""Runs one of Debian's Swift servers for mediabatch's tests (started by test/support/s3-server.ts).

usage: /usr/bin/python3 launch-server.py SERVER CONF [RING=PORT ...]

SERVER is account, container, object or proxy; the script run is /usr/bin/swift-SERVER-server
CONF, exactly as Debian ships it. What this adds, and why:

- eventlet is monkey-patched before Swift is imported. Swift patches it only after its own
  imports, and eventlet then runs a full garbage collection for each lock made so far: about a
  second per server on a small machine. Patched first, there is little to collect, and Swift's
  own call finds the work done. DNS is never needed (every address is 127.0.0.1), so eventlet's
  green DNS, and the dnspython import behind it, are left out. The helper also starts Python
  with SETUPTOOLS_USE_DISTUTILS=stdlib, which keeps eventlet's `import distutils` from loading
  all of setuptools. Together: about 0.3 s to a listening server instead of 1.2 to 2 s.
- RING=PORT arguments (the proxy's) build the missing rings next to CONF with Swift's own
  RingBuilder, one device on 127.0.0.1:PORT and one replica, in this process: one Python start
  fewer than a separate ring step. A restarted proxy finds them and builds nothing.
- Log lines go to this process's stderr (a file the test helper opened), not to syslog: test
  machines have no /dev/log, and Swift would send them as UDP to localhost:514. Swift closes
  stderr once the server is up, so the handler writes to a copy of it.
- The server exits when the test process that started it dies, even by SIGKILL: it runs in a
  process group of its own, so nothing else would stop it.
"""

import os
import sys

os.environ.setdefault('EVENTLET_NO_GREENDNS', 'yes')

import eventlet.patcher  # noqa: E402

eventlet.patcher.monkey_patch(all=False, socket=True, select=True, thread=True)

import logging  # noqa: E402
import runpy  # noqa: E402

_real_threading = eventlet.patcher.original('threading')
_real_time = eventlet.patcher.original('time')


def exit_with_parent():
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            _real_time.sleep(0.5)
        os._exit(0)

    # A native thread: Swift replaces the eventlet hub when it starts serving, which would drop
    # a green thread started here.
    _real_threading.Thread(target=watch, daemon=True).start()


def log_to_stderr_copy():
    from swift.common import utils

    stream = os.fdopen(os.dup(2), 'w', buffering=1)

    class CopiedStderrHandler(logging.StreamHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(stream)

        def format(self, record):
            stamp = _real_time.strftime('%H:%M:%S', _real_time.gmtime(record.created))
            return '%s %s' % (stamp, super().format(record))

    utils.ThreadSafeSysLogHandler = CopiedStderrHandler


def build_missing_rings(conf_dir, ring_ports):
    from swift.common.ring import RingBuilder

    for spec in ring_ports:
        name, port = spec.split('=')
        path = os.path.join(conf_dir, '%s.ring.gz' % name)
        if os.path.exists(path):
            continue
        builder = RingBuilder(part_power=0, replicas=1, min_part_hours=0)
        builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port),
                         'device': 'd1', 'weight': 1})
        builder.rebalance()
        builder.get_ring().save(path)


def main():
    server, conf, *ring_ports = sys.argv[1:]
    exit_with_parent()
    log_to_stderr_copy()
    build_missing_rings(os.path.dirname(os.path.abspath(conf)), ring_ports)
    script = '/usr/bin/swift-%s-server' % server
    sys.argv = [script, conf]
    runpy.run_path(script, run_name='__main__')


main()
