"""The kazoo side of zk-recipes' lock benchmarks. Run with Debian's /usr/bin/python3 (python3-kazoo).

Everything runs in this one process: the orchestrator (bench/peers/remote.ts) sends one command at a
time as a JSON line on stdin and reads one JSON reply line on stdout. Commands: ``open {connects,
sessions, sessionTimeoutMs}`` opens that many KazooClients (one ZooKeeper session each; ``connects``
holds connect strings separated by spaces, and session i connects to the (i mod their number)-th,
so that on an ensemble every library spreads its sessions alike); ``close``;
``uncontended {path, iterations}``; ``contended {path, durationMs}`` (one thread per open session);
``handoff.queue {path, waiters}`` then ``handoff.run``; ``rwlock {path, durationMs, writePercent}``
(one thread per open session, each with its own ReadLock and WriteLock); ``leader.start {path}``,
``leader.failover``, ``leader.stop`` (one Election per open session: kazoo has no LeaderLatch, and its
Election is its Lock with the leader function run while held); ``queue.prepare {path, producers,
consumers, items}`` then ``queue.run`` (one kazoo Queue per producer or consumer, each on its own
session); ``cache.load {path}`` (a TreeCache on session 0, until initialized: kazoo has no
CuratorCache), ``cache.expect {changes}``, ``cache.await {timeoutMs}`` (until that many NODE_UPDATED
events), ``cache.stop``; ``exit``. Every contender has its own kazoo Lock object on its own thread.

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
from kazoo.recipe.cache import TreeCache, TreeEvent
from kazoo.recipe.election import Election
from kazoo.recipe.lock import Lock, ReadLock, WriteLock
from kazoo.recipe.queue import Queue
from kazoo.retry import ForceRetryError
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


def _kazoo_before(major, minor):
    try:
        return tuple(int(x) for x in kazoo.version.__version__.split(".")[:2]) < (major, minor)
    except ValueError:
        return False


class OrderedReadLock(ReadLock):
    """A ReadLock that waits only for the last write node *before its own*.

    kazoo before 2.9.0 has a reader wait for the last write node of the whole list, even one queued
    behind the reader, and that writer waits for the reader: both wait forever (kazoo issue #649,
    fixed in 2.9.0). Under the rwlock scenario's load it deadlocks within a second, so with such a
    kazoo the driver runs this reader instead, which follows the ZooKeeper shared-lock recipe as
    kazoo 2.9.0 does. Everything else is kazoo's own ReadLock.
    """

    def _get_predecessor(self, node):
        children = self.client.get_children(self.path)
        if node not in children:
            raise ForceRetryError()  # our node is gone (a session loss): kazoo's own retry
        mine = node[-10:]
        before = None
        for child in children:
            match = self._contenders_re.search(child)
            if match is None or match.group(1) >= mine:
                continue
            if before is None or match.group(1) > before.group(1):
                before = match
        return None if before is None else before.string


#: The read lock the rwlock scenario runs, and what the results say about it.
if _kazoo_before(2, 9):
    RWLOCK_READ_LOCK = OrderedReadLock
    RWLOCK_NOTE = ("kazoo %s's ReadLock deadlocks against a queued writer (kazoo issue #649, fixed in 2.9.0): "
                   "the driver runs it with 2.9.0's rule, a reader waiting only for the last writer before it"
                   % kazoo.version.__version__)
else:
    RWLOCK_READ_LOCK = ReadLock
    RWLOCK_NOTE = None


def session_seed(k):
    """Session k's seed for the read-or-write choice: the same xorshift32 as bench/peers/rng.ts."""
    seed = 0x9E3779B9 ^ (((k + 1) * 0x85EBCA6B) & 0xFFFFFFFF)
    return seed or 1


def xorshift32(x):
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x


class RwOverlap:
    """The read-write check: a writer entering while anyone holds, or a reader while a writer holds."""

    def __init__(self):
        self._guard = threading.Lock()
        self._readers = 0
        self._writers = 0
        self.violations = 0
        self.max_readers = 0

    def enter(self, write):
        with self._guard:
            if write:
                if self._readers or self._writers:
                    self.violations += 1
                self._writers += 1
            else:
                if self._writers:
                    self.violations += 1
                self._readers += 1
                self.max_readers = max(self.max_readers, self._readers)

    def leave(self, write):
        with self._guard:
            if write:
                self._writers -= 1
            else:
                self._readers -= 1


class CacheRun:
    """A TreeCache (kazoo has no CuratorCache) counting its NODE_UPDATED events."""

    def __init__(self, client, path):
        self.path = path
        self.cache = TreeCache(client, path)
        self.initialized = threading.Event()
        self.progress = threading.Condition()
        self.expected = 0
        self.events = 0
        self.start_ns = 0
        self.last_ns = 0
        self.cache.listen(self._on_event)

    def _on_event(self, event):
        if event.event_type == TreeEvent.INITIALIZED:
            self.initialized.set()
        elif event.event_type == TreeEvent.NODE_UPDATED:
            with self.progress:
                self.events += 1
                self.last_ns = time.perf_counter_ns()
                if self.expected and self.events >= self.expected:
                    self.progress.notify_all()

    def _count(self, path):
        children = self.cache.get_children(path) or ()
        return 1 + sum(self._count(path + "/" + child) for child in children)

    def load(self):
        t0 = time.perf_counter_ns()
        self.cache.start()
        if not self.initialized.wait(600):
            raise RuntimeError("the TreeCache did not initialize within 600 s")
        elapsed_ms = (time.perf_counter_ns() - t0) / 1e6
        return {"elapsedMs": elapsed_ms, "nodes": self._count(self.path)}

    def expect(self, changes):
        with self.progress:
            self.expected = int(changes)
            self.events = 0
            self.start_ns = self.last_ns = time.perf_counter_ns()
        return {}

    def wait(self, timeout_ms):
        deadline = time.monotonic() + timeout_ms / 1000.0
        with self.progress:
            while self.events < self.expected and time.monotonic() < deadline:
                self.progress.wait(max(0.0, deadline - time.monotonic()))
            return {"elapsedMs": (self.last_ns - self.start_ns) / 1e6, "events": self.events}


class Driver:
    def __init__(self):
        self.clients = []
        self.uncontended_locks = {}
        self.handoff = None
        self.election = None
        self.queue_run = None
        self.cache_run = None

    def cache_stop(self):
        if self.cache_run is not None:
            self.cache_run.cache.close()
            self.cache_run = None
        return {}

    # ------------------------------------------------------------ sessions

    def open(self, connects, sessions, session_timeout_ms):
        self.close()
        for i in range(int(sessions)):
            client = KazooClient(hosts=connects[i % len(connects)], timeout=session_timeout_ms / 1000.0)
            self.clients.append(client)
            client.start(timeout=30)

    def close(self):
        self.cache_stop()
        self.leader_stop()
        self.queue_stop()
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

    def handoff_queue(self, path, waiters, hold_ms=0):
        if self.handoff is not None:
            raise RuntimeError("a hand-off is already queued")
        self.handoff = Handoff(self, path, int(waiters), hold_ms)
        self.handoff.queue()
        return {}

    def handoff_run(self):
        if self.handoff is None:
            raise RuntimeError("no hand-off is queued")
        try:
            return self.handoff.run()
        finally:
            self.handoff = None

    def rwlock(self, path, duration_ms, write_percent):
        n = len(self.clients)
        if n == 0:
            raise RuntimeError("no sessions are open")
        overlap = RwOverlap()
        start = threading.Barrier(n + 1)
        reads = [0] * n
        writes = [0] * n
        holds = [[] for _ in range(n)]
        failures = []
        deadline = [0]

        def loop(k):
            try:
                read_lock = RWLOCK_READ_LOCK(self.session(k), path)
                write_lock = WriteLock(self.session(k), path)
                x = session_seed(k)
                start.wait()
                mine = holds[k]
                while time.perf_counter_ns() < deadline[0]:
                    x = xorshift32(x)
                    write = x % 100 < write_percent
                    lock = write_lock if write else read_lock
                    lock.acquire()
                    overlap.enter(write)
                    t0 = micros()
                    t1 = micros()
                    overlap.leave(write)
                    lock.release()
                    mine.append(t0)
                    mine.append(t1)
                    mine.append(1 if write else 0)
                    if write:
                        writes[k] += 1
                    else:
                        reads[k] += 1
            except Exception as e:  # noqa: BLE001 - reported to the orchestrator
                failures.append(e)

        threads = [threading.Thread(target=loop, args=(k,), name="rw-%d" % k, daemon=True) for k in range(n)]
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
        result = {"reads": reads, "writes": writes, "elapsedMs": elapsed_ms, "violations": overlap.violations,
                  "maxReaders": overlap.max_readers, "holds": flat}
        if RWLOCK_NOTE:
            result["note"] = RWLOCK_NOTE
        return result

    def leader_start(self, path):
        if not self.clients:
            raise RuntimeError("no sessions are open")
        if self.election is not None and self.election.path != path:
            self.leader_stop()
        if self.election is None:
            self.election = Elections(self, path)
        self.election.start()
        return {}

    def leader_failover(self):
        if self.election is None:
            raise RuntimeError("no election is running")
        return self.election.failover()

    def leader_stop(self):
        election, self.election = self.election, None
        if election is not None:
            election.stop()
        return {}

    def queue_prepare(self, path, producers, consumers, items):
        if self.queue_run is not None:
            raise RuntimeError("a queue run is already prepared")
        self.queue_run = QueueRun(self, path, int(producers), int(consumers), int(items))
        self.queue_run.prepare()
        return {}

    def queue_go(self):
        if self.queue_run is None:
            raise RuntimeError("no queue run is prepared")
        try:
            return self.queue_run.run()
        finally:
            self.queue_stop()

    def queue_stop(self):
        run, self.queue_run = self.queue_run, None
        if run is not None:
            run.stop()


class Participant:
    """One kazoo Election on its own thread: it leads while its leader function runs, and leaves
    the election (the function returns, the lock is released) once told to close."""

    def __init__(self, elections, client, index):
        self.elections = elections
        self.election = Election(client, elections.path, "participant-%d" % index)
        self.leading = False
        self.closing = False
        self.close_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="participant-%d" % index, daemon=True)

    def _run(self):
        try:
            self.election.run(self._lead)
        except Exception as e:  # noqa: BLE001 - reported to the orchestrator
            self.elections.failures.append(e)

    def _lead(self):
        self.leading = True
        self.elections.on_leader(self)
        self.close_event.wait()
        self.leading = False

    def in_race(self):
        return self.election.lock.node is not None

    def close(self):
        self.closing = True
        if self.leading:
            self.close_event.set()
        else:
            self.election.cancel()
            self.close_event.set()


class Elections:
    """One Participant per session. start() fills every session that has none and waits until each
    has its lock node and exactly one leads; failover() closes the leader and waits for the next
    one's leader function to start."""

    def __init__(self, driver, path):
        self.driver = driver
        self.path = path
        self.parts = [None] * len(driver.clients)
        self.guard = threading.Lock()
        self.elections = 0
        self.violations = 0
        self.next = None
        self.next_at = 0.0
        self.failures = []

    def on_leader(self, part):
        at = micros()
        with self.guard:
            self.elections += 1
            for other in self.parts:
                if other is not None and other is not part and not other.closing and other.leading:
                    self.violations += 1
            if self.next is not None:
                self.next_at = at
                self.next.set()

    def start(self):
        for i in range(len(self.parts)):
            if self.parts[i] is None:
                part = Participant(self, self.driver.session(i), i)
                with self.guard:
                    self.parts[i] = part
                part.thread.start()
        deadline = time.monotonic() + 30
        while True:
            if self.failures:
                raise RuntimeError("a participant failed: %r" % self.failures[0])
            leaders = sum(1 for p in self.parts if p.leading)
            if leaders == 1 and all(p.in_race() for p in self.parts):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("no single leader with every participant in the race after 30 s (%d leading)" % leaders)
            time.sleep(0.002)

    def failover(self):
        at = next((i for i, p in enumerate(self.parts) if p is not None and p.leading), None)
        if at is None:
            raise RuntimeError("nobody leads")
        old = self.parts[at]
        arrived = threading.Event()
        with self.guard:
            self.elections = 0
            self.violations = 0
            self.next = arrived
        try:
            t0 = micros()
            old.close()
            if not arrived.wait(30):
                raise RuntimeError("no new leader within 30 s")
            old.thread.join(30)
            leaders = sum(1 for p in self.parts if p is not None and p.leading)
            with self.guard:
                return {"failoverUs": self.next_at - t0, "leaders": leaders, "elections": self.elections,
                        "violations": self.violations}
        finally:
            with self.guard:
                self.next = None
                self.parts[at] = None

    def stop(self):
        parts = [p for p in self.parts if p is not None]
        self.parts = [None] * len(self.parts)
        for p in parts:
            p.close()
        for p in parts:
            p.thread.join(10)


class QueueRun:
    """Producers on sessions 0 … P-1 and consumers on the next C sessions, each with its own kazoo
    Queue (put / get; get() deletes the item as it takes it, and returns None when the queue is
    empty, so a consumer polls: it sleeps POLL_S after an empty get)."""

    POLL_S = 0.005
    STALL_S = 10.0
    GRACE_S = 0.1

    def __init__(self, driver, path, producers, consumers, items):
        self.driver = driver
        self.path = path
        self.producers = producers
        self.consumers = consumers
        self.items = items
        self.received = [[] for _ in range(consumers)]
        self.guard = threading.Condition()
        self.consumed = 0
        self.last_consumed = 0.0
        self.done_at = None
        self.go = threading.Event()
        self.stopping = threading.Event()
        self.failures = []
        self.threads = []

    def prepare(self):
        if len(self.driver.clients) < self.producers + self.consumers:
            raise RuntimeError("%d producers and %d consumers need more sessions than %d"
                               % (self.producers, self.consumers, len(self.driver.clients)))
        self.driver.session(0).ensure_path(self.path)
        for j in range(self.consumers):
            queue = Queue(self.driver.session(self.producers + j), self.path)
            t = threading.Thread(target=self._consume, args=(queue, self.received[j]), name="consumer-%d" % j, daemon=True)
            self.threads.append(t)
            t.start()

    def _consume(self, queue, mine):
        try:
            self.go.wait()
            while not self.stopping.is_set():
                data = queue.get()
                if data is None:
                    time.sleep(self.POLL_S)
                    continue
                producer, _, seq = data.decode("utf-8").partition(":")
                with self.guard:
                    mine.append(int(producer))
                    mine.append(int(seq))
                    self.last_consumed = micros()
                    self.consumed += 1
                    if self.consumed == self.items:
                        self.done_at = self.last_consumed
                    self.guard.notify_all()
        except Exception as e:  # noqa: BLE001 - reported to the orchestrator
            self.failures.append(e)
            with self.guard:
                self.guard.notify_all()

    def _produce(self, queue, producer, count):
        try:
            for s in range(count):
                queue.put(("%d:%d" % (producer, s)).encode("utf-8"))
        except Exception as e:  # noqa: BLE001 - reported to the orchestrator
            self.failures.append(e)

    def run(self):
        producers = []
        for k in range(self.producers):
            count = self.items // self.producers + (1 if k < self.items % self.producers else 0)
            queue = Queue(self.driver.session(k), self.path)
            producers.append(threading.Thread(target=self._produce, args=(queue, k, count), name="producer-%d" % k, daemon=True))
        t0 = micros()
        self.go.set()
        for t in producers:
            t.start()
        for t in producers:
            t.join()
        # Every item is in; wait for the last to be consumed, or for consumption to stall.
        with self.guard:
            while self.done_at is None and not self.failures:
                before = self.consumed
                self.guard.wait(self.STALL_S)
                if self.done_at is None and self.consumed == before:
                    break
        time.sleep(self.GRACE_S)
        self.stop()
        if self.failures:
            raise RuntimeError("a producer or consumer failed: %r" % self.failures[0])
        with self.guard:
            end = self.done_at if self.done_at is not None else self.last_consumed
            return {"elapsedMs": (end - t0) / 1000.0, "received": [list(r) for r in self.received]}

    def stop(self):
        self.stopping.set()
        self.go.set()
        for t in self.threads:
            t.join(10)


class Handoff:
    """One holder (session 0) and `waiters` waiting threads spread round-robin over the sessions,
    each with its own Lock. queue() returns once the holder holds and every waiter thread has been
    started (the orchestrator then waits for their watches on the server); run() releases the holder
    and waits until every waiter has held and released the lock."""

    def __init__(self, driver, path, waiters, hold_ms=0):
        self.driver = driver
        self.path = path
        self.waiters = waiters
        self.hold_s = hold_ms / 1000.0
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
            elif self.hold_s > 0:
                time.sleep(self.hold_s)
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
                driver.open(request["connects"].split(" "), request["sessions"], request["sessionTimeoutMs"])
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
                result = driver.handoff_queue(request["path"], request["waiters"], request.get("holdMs", 0))
            elif cmd == "handoff.run":
                result = driver.handoff_run()
            elif cmd == "rwlock":
                result = driver.rwlock(request["path"], request["durationMs"], request["writePercent"])
            elif cmd == "leader.start":
                result = driver.leader_start(request["path"])
            elif cmd == "leader.failover":
                result = driver.leader_failover()
            elif cmd == "leader.stop":
                result = driver.leader_stop()
            elif cmd == "queue.prepare":
                result = driver.queue_prepare(request["path"], request["producers"], request["consumers"], request["items"])
            elif cmd == "queue.run":
                result = driver.queue_go()
            elif cmd == "cache.load":
                driver.cache_stop()
                driver.cache_run = CacheRun(driver.session(0), request["path"])
                result = driver.cache_run.load()
            elif cmd == "cache.expect":
                result = driver.cache_run.expect(request["changes"])
            elif cmd == "cache.await":
                result = driver.cache_run.wait(request["timeoutMs"])
            elif cmd == "cache.stop":
                result = driver.cache_stop()
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
