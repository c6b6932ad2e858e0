"""The kazoo side of zk-recipes' lock benchmarks. Run with Debian's /usr/bin/python3 (python3-kazoo).

Everything runs in this one process: the orchestrator (bench/peers/remote.ts) sends one command at a
time as a JSON line on stdin and reads one JSON reply line on stdout. Commands: ``open {connect,
sessions, sessionTimeoutMs}`` opens that many KazooClients (one ZooKeeper session each); ``close``;
``uncontended {path, iterations}``; ``contended {path, durationMs}`` (one thread per open session);
``handoff.queue {path, waiters}`` then ``handoff.run``; ``exit``. Every contender has its own
kazoo Lock object on its own thread.

Overlap check: a holder increments a shared counter (under a threading.Lock) right after acquire()
returns and decrements it right before release(); the span between is its critical section. Two
overlapping critical sections make the later increment see 2, so the count of such increments is
exact. The sections' timestamps (time.perf_counter_ns, one clock for every thread) are returned too,
for the orchestrator's own check.
"""

import json
import logging
import os
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock
import kazoo.version

_BASE = time.perf_counter_ns()
_OUT = sys.stdout
# Only protocol lines may reach stdout.
sys.stdout = sys.stderr
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
threading.stack_size(512 * 1024)


def micros():
    return (time.perf_counter_ns() - _BASE) / 1000.0


def emit(obj):
    _OUT.write(json.dumps(obj, separators=(",", ":")) + "\n")
    _OUT.flush()


class Overlap:
    """Counts entries into a critical section that find another holder inside."""

    def __init__(self):
        self._guard = threading.Lock()
        self._holders = 0
        self.violations = 0

    def enter(self):
        with self._guard:
            self._holders += 1
            if self._holders != 1:
                self.violations += 1

    def leave(self):
        with self._guard:
            self._holders -= 1


class Driver:
    def __init__(self):
        self.clients = []
        self.uncontended_locks = {}
        self.handoff = None

    # ------------------------------------------------------------ sessions

    def open(self, connect, sessions, session_timeout_ms):
        self.close()
        for _ in range(int(sessions)):
            client = KazooClient(hosts=connect, timeout=session_timeout_ms / 1000.0)
            self.clients.append(client)
            client.start(timeout=30)

    def close(self):
        for client in self.clients:
            try:
                client.stop()
                client.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        self.clients = []
        self.uncontended_locks = {}

    def session(self, i):
        if not self.clients:
            raise RuntimeError("no sessions are open")
        return self.clients[i % len(self.clients)]

    # ------------------------------------------------------------ scenarios

    def uncontended(self, path, iterations):
        lock = self.uncontended_locks.get(path)
        if lock is None:
            lock = self.uncontended_locks[path] = Lock(self.session(0), path)
        lat = []
        for _ in range(int(iterations)):
            t0 = time.perf_counter_ns()
            lock.acquire()
            lock.release()
            lat.append((time.perf_counter_ns() - t0) / 1000.0)
        return {"latUs": lat}

    def contended(self, path, duration_ms):
        n = len(self.clients)
        if n == 0:
            raise RuntimeError("no sessions are open")
        overlap = Overlap()
        start = threading.Barrier(n + 1)
        counts = [0] * n
        holds = [[] for _ in range(n)]
        failures = []
        deadline = [0]

        def loop(k):
            try:
                lock = Lock(self.session(k), path)
                start.wait()
                mine = holds[k]
                while time.perf_counter_ns() < deadline[0]:
                    lock.acquire()
                    overlap.enter()
                    t0 = micros()
                    t1 = micros()
                    overlap.leave()
                    lock.release()
                    mine.append(t0)
                    mine.append(t1)
                    counts[k] += 1
            except Exception as e:  # noqa: BLE001 - reported to the orchestrator
                failures.append(e)

        threads = [threading.Thread(target=loop, args=(k,), name="contender-%d" % k, daemon=True) for k in range(n)]
        for t in threads:
            t.start()
        deadline[0] = time.perf_counter_ns() + int(duration_ms * 1e6)
        t0 = time.perf_counter_ns()
        start.wait()
        for t in threads:
            t.join()
        elapsed_ms = (time.perf_counter_ns() - t0) / 1e6
        if failures:
            raise RuntimeError("a contender failed: %r" % failures[0])
        flat = [x for h in holds for x in h]
        return {"counts": counts, "elapsedMs": elapsed_ms, "violations": overlap.violations, "holds": flat}

    def handoff_queue(self, path, waiters):
        if self.handoff is not None:
            raise RuntimeError("a hand-off is already queued")
        self.handoff = Handoff(self, path, int(waiters))
        self.handoff.queue()
        return {}

    def handoff_run(self):
        if self.handoff is None:
            raise RuntimeError("no hand-off is queued")
        try:
            return self.handoff.run()
        finally:
            self.handoff = None


class Handoff:
    """One holder (session 0) and `waiters` waiting threads spread round-robin over the sessions,
    each with its own Lock. queue() returns once the holder holds and every waiter thread has been
    started (the orchestrator then waits for their watches on the server); run() releases the holder
    and waits until every waiter has held and released the lock."""

    def __init__(self, driver, path, waiters):
        self.driver = driver
        self.path = path
        self.waiters = waiters
        self.acquired = [0.0] * (waiters + 1)
        self.released = [0.0] * (waiters + 1)
        self.overlap = Overlap()
        self.failures = []
        self.held = threading.Event()
        self.go = threading.Event()
        self.threads = []

    def hold(self, k):
        try:
            session = self.driver.session(0 if k == 0 else k - 1)
            lock = Lock(session, self.path)
            lock.acquire()
            self.overlap.enter()
            self.acquired[k] = micros()
            if k == 0:
                self.held.set()
                self.go.wait()
            self.released[k] = micros()
            self.overlap.leave()
            lock.release()
        except Exception as e:  # noqa: BLE001 - reported to the orchestrator
            self.failures.append(e)
            self.held.set()

    def queue(self):
        holder = threading.Thread(target=self.hold, args=(0,), name="holder", daemon=True)
        self.threads.append(holder)
        holder.start()
        self.held.wait()
        if self.failures:
            raise RuntimeError("the holder failed: %r" % self.failures[0])
        for k in range(1, self.waiters + 1):
            t = threading.Thread(target=self.hold, args=(k,), name="waiter-%d" % k, daemon=True)
            self.threads.append(t)
            t.start()

    def run(self):
        self.go.set()
        for t in self.threads:
            t.join()
        if self.failures:
            raise RuntimeError("a waiter failed: %r" % self.failures[0])
        return {"acquiredUs": self.acquired, "releasedUs": self.released, "violations": self.overlap.violations}


def main():
    driver = Driver()
    emit({"event": "ready", "versions": {
        "kazoo": kazoo.version.__version__,
        "python": sys.version.split()[0],
    }})
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        rid = request.get("id")
        cmd = request.get("cmd")
        try:
            if cmd == "exit":
                driver.close()
                emit({"id": rid, "ok": True})
                break
            if cmd == "open":
                driver.open(request["connect"], request["sessions"], request["sessionTimeoutMs"])
                result = {}
            elif cmd == "close":
                driver.close()
                driver.handoff = None
                result = {}
            elif cmd == "uncontended":
                result = driver.uncontended(request["path"], request["iterations"])
            elif cmd == "contended":
                result = driver.contended(request["path"], request["durationMs"])
            elif cmd == "handoff.queue":
                result = driver.handoff_queue(request["path"], request["waiters"])
            elif cmd == "handoff.run":
                result = driver.handoff_run()
            else:
                raise ValueError("unknown command %s" % cmd)
            reply = {"id": rid, "ok": True}
            reply.update(result)
            emit(reply)
        except Exception as e:  # noqa: BLE001 - reported to the orchestrator
            emit({"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    driver.close()
    sys.stderr.flush()
    # Lingering kazoo threads must not keep the process alive once stdin ends.
    os._exit(0)


if __name__ == "__main__":
    main()
