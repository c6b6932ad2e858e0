package zkrecipes.bench;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;

/**
 * The Curator side of zk-recipes' lock benchmarks (bench only; the interop peer is interop/curator).
 *
 * <p>Everything runs in this one JVM: the orchestrator (bench/peers/remote.ts) sends one command at a
 * time as a JSON line on stdin and reads one JSON reply line on stdout. Commands: {@code open
 * {connects, sessions, sessionTimeoutMs}} opens that many CuratorFrameworks (one ZooKeeper session
 * each; {@code connects} holds connect strings separated by spaces, and session i connects to the
 * (i mod their number)-th, so that on an ensemble every library spreads its sessions alike);
 * {@code close}; {@code uncontended {path, iterations}}; {@code contended {path, durationMs}}
 * (one thread per open session); {@code handoff.queue {path, waiters}} then {@code handoff.run};
 * {@code rwlock {path, durationMs, writePercent}} (one thread per open session, each with its own
 * InterProcessReadWriteLock); {@code leader.start {path}}, {@code leader.failover}, {@code
 * leader.stop} (one LeaderLatch per open session); {@code queue.prepare {path, producers, consumers,
 * items}} then {@code queue.run} (one DistributedQueue per producer or consumer, each on its own
 * session); {@code cache.load {path}} (a CuratorCache on session 0, until initialized), {@code
 * cache.expect {changes}}, {@code cache.await {timeoutMs}} (until that many NODE_CHANGED events),
 * {@code cache.stop}; {@code discovery.register {basePath, name, count}} (a ServiceDiscovery&lt;Map&gt; on
 * session 0 registering that many DYNAMIC instances, one after another), {@code discovery.warm
 * {basePath, name}} (a round-robin ServiceProvider on a ServiceDiscovery of its own, until started),
 * {@code discovery.pick {durationMs, check}}, {@code discovery.stop}; {@code exit}. Every contender has its own lock object on its own thread, as Curator's
 * locks belong to threads.
 *
 * <p>Overlap check: a holder increments a shared AtomicInteger right after acquire() returns and
 * decrements it right before release(); the span between is its critical section. Any two overlapping
 * critical sections make the later increment see 2, so the count of such increments is exact. The
 * sections' timestamps (System.nanoTime, one clock for every thread) are returned too, for the
 * orchestrator's own check.
 */
public final class CuratorBench {
    private static final Writer OUT = new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8);
    private static final long BASE = System.nanoTime();

    private final List<CuratorFramework> clients = new ArrayList<>();
    private final Map<String, InterProcessMutex> uncontendedMutexes = new LinkedHashMap<>();
    private Handoff handoff;
    private Election election;
    private QueueRun queueRun;
    private CacheRun cacheRun;
    private DiscoveryRun discoveryRun;

    public static void main(String[] args) throws Exception {
        // Only protocol lines may reach stdout.
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, "UTF-8"));
        CuratorBench bench = new CuratorBench();
        Json versions = new Json()
                .put("curator", mavenVersion("org.apache.curator", "curator-recipes"))
                .put("zookeeperClient", org.apache.zookeeper.Version.getFullVersion())
                .put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        emit(new Json().put("event", "ready").putRaw("versions", versions.toString()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            Map<String, Object> request = Json.parse(line);
            Object id = request.get("id");
            Json reply = new Json().put("id", id).put("ok", true);
            try {
                String cmd = String.valueOf(request.get("cmd"));
                if (cmd.equals("exit")) {
                    bench.closeSessions();
                    emit(reply);
                    System.exit(0);
                }
                bench.handle(cmd, request, reply);
            } catch (Throwable e) {
                reply = new Json().put("id", id).put("ok", false).put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            emit(reply);
        }
        bench.closeSessions();
        System.exit(0);
    }

    private void handle(String cmd, Map<String, Object> a, Json reply) throws Exception {
        switch (cmd) {
            case "open":
                open(str(a, "connects").split(" "), (int) num(a, "sessions"), (int) num(a, "sessionTimeoutMs"));
                return;
            case "close":
                closeSessions();
                handoff = null;
                return;
            case "rwlock":
                rwlock(str(a, "path"), num(a, "durationMs"), (int) num(a, "writePercent"), reply);
                return;
            case "leader.start":
                if (election != null && !election.path.equals(str(a, "path"))) stopElection();
                if (election == null) election = new Election(str(a, "path"), clients.size());
                election.start();
                return;
            case "leader.failover":
                if (election == null) throw new IllegalStateException("no election is running");
                election.failover(reply);
                return;
            case "leader.stop":
                stopElection();
                return;
            case "queue.prepare":
                if (queueRun != null) throw new IllegalStateException("a queue run is already prepared");
                queueRun = new QueueRun(str(a, "path"), (int) num(a, "producers"), (int) num(a, "consumers"), (int) num(a, "items"));
                queueRun.prepare();
                return;
            case "queue.run":
                if (queueRun == null) throw new IllegalStateException("no queue run is prepared");
                try {
                    queueRun.run(reply);
                } finally {
                    stopQueue();
                }
                return;
            case "uncontended":
                uncontended(str(a, "path"), (int) num(a, "iterations"), reply);
                return;
            case "cache.load":
                stopCache();
                cacheRun = new CacheRun(session(0), str(a, "path"));
                cacheRun.load(reply);
                return;
            case "cache.expect":
                if (cacheRun == null) throw new IllegalStateException("no cache is loaded");
                cacheRun.expect((int) num(a, "changes"));
                return;
            case "cache.await":
                if (cacheRun == null) throw new IllegalStateException("no cache is loaded");
                cacheRun.await(num(a, "timeoutMs"), reply);
                return;
            case "cache.stop":
                stopCache();
                return;
            case "discovery.register":
                if (discoveryRun == null) discoveryRun = new DiscoveryRun();
                discoveryRun.register(session(0), str(a, "basePath"), str(a, "name"), (int) num(a, "count"), reply);
                return;
            case "discovery.warm":
                if (discoveryRun == null) discoveryRun = new DiscoveryRun();
                discoveryRun.warm(session(0), str(a, "basePath"), str(a, "name"), reply);
                return;
            case "discovery.pick":
                if (discoveryRun == null) throw new IllegalStateException("no provider is warmed");
                discoveryRun.pick(num(a, "durationMs"), (int) num(a, "check"), reply);
                return;
            case "discovery.stop":
                stopDiscovery();
                return;
            case "contended":
                contended(str(a, "path"), num(a, "durationMs"), reply);
                return;
            case "handoff.queue":
                if (handoff != null) throw new IllegalStateException("a hand-off is already queued");
                handoff = new Handoff(str(a, "path"), (int) num(a, "waiters"), a.containsKey("holdMs") ? (long) num(a, "holdMs") : 0);
                handoff.queue();
                return;
            case "handoff.run":
                if (handoff == null) throw new IllegalStateException("no hand-off is queued");
                try {
                    handoff.run(reply);
                } finally {
                    handoff = null;
                }
                return;
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    // ------------------------------------------------------------------ sessions

    private void open(String[] connects, int sessions, int sessionTimeoutMs) throws Exception {
        closeSessions();
        for (int i = 0; i < sessions; i++) {
            CuratorFramework client = CuratorFrameworkFactory.builder()
                    .connectString(connects[i % connects.length])
                    .sessionTimeoutMs(sessionTimeoutMs)
                    .connectionTimeoutMs(15_000)
                    .retryPolicy(new ExponentialBackoffRetry(1_000, 3))
                    .build();
            clients.add(client);
            client.start();
        }
        for (CuratorFramework client : clients) {
            if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("could not connect to " + String.join(" or ", connects));
        }
    }

    private void closeSessions() {
        stopCache();
        stopDiscovery();
        stopElection();
        stopQueue();
        for (CuratorFramework client : clients) client.close();
        clients.clear();
        uncontendedMutexes.clear();
    }

    private CuratorFramework session(int i) {
        if (clients.isEmpty()) throw new IllegalStateException("no sessions are open");
        return clients.get(i % clients.size());
    }

    // ------------------------------------------------------------------ scenarios

    /** Acquire and release on session 0, one after another: the latency of each pair, in µs. */
    private void uncontended(String path, int iterations, Json reply) throws Exception {
        InterProcessMutex mutex = uncontendedMutexes.computeIfAbsent(path, p -> new InterProcessMutex(session(0), p));
        double[] micros = new double[iterations];
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            mutex.acquire();
            mutex.release();
            micros[i] = (System.nanoTime() - t0) / 1_000.0;
        }
        reply.putRaw("latUs", Json.array(micros, micros.length));
    }

    /** One thread per session, each looping acquire/release on its own mutex until the deadline. */
    private void contended(String path, double durationMs, Json reply) throws Exception {
        int n = clients.size();
        if (n == 0) throw new IllegalStateException("no sessions are open");
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(n + 1);
        int[] counts = new int[n];
        List<double[]> holds = new ArrayList<>();
        int[] holdLengths = new int[n];
        Thread[] threads = new Thread[n];
        long[] deadline = new long[1];
        for (int i = 0; i < n; i++) {
            final int k = i;
            double[] mine = new double[1024];
            holds.add(mine);
            threads[i] = new Thread(() -> {
                double[] h = mine;
                int len = 0;
                try {
                    InterProcessMutex mutex = new InterProcessMutex(session(k), path);
                    start.await();
                    while (System.nanoTime() < deadline[0]) {
                        mutex.acquire();
                        if (holders.incrementAndGet() != 1) violations.incrementAndGet();
                        double t0 = micros();
                        double t1 = micros();
                        holders.decrementAndGet();
                        mutex.release();
                        if (len + 2 > h.length) h = java.util.Arrays.copyOf(h, h.length * 2);
                        h[len++] = t0;
                        h[len++] = t1;
                        counts[k]++;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                holds.set(k, h);
                holdLengths[k] = len;
            }, "contender-" + i);
            threads[i].setDaemon(true);
            threads[i].start();
        }
        deadline[0] = System.nanoTime() + (long) (durationMs * 1e6);
        long t0 = System.nanoTime();
        start.await();
        for (Thread t : threads) t.join();
        double elapsedMs = (System.nanoTime() - t0) / 1e6;
        if (failure.get() != null) throw new RuntimeException("a contender failed", failure.get());
        StringBuilder all = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            double[] h = holds.get(i);
            for (int j = 0; j < holdLengths[i]; j++) {
                if (all.length() > 1) all.append(',');
                all.append(Json.number(h[j]));
            }
        }
        all.append(']');
        StringBuilder c = new StringBuilder("[");
        for (int i = 0; i < n; i++) c.append(i == 0 ? "" : ",").append(counts[i]);
        c.append(']');
        reply.putRaw("counts", c.toString()).put("elapsedMs", elapsedMs).put("violations", violations.get()).putRaw("holds", all.toString());
    }

    private static double micros() {
        return (System.nanoTime() - BASE) / 1_000.0;
    }

    /**
     * One holder (session 0) and `waiters` waiting threads spread round-robin over the sessions,
     * each with its own InterProcessMutex. queue() returns once the holder holds and every waiter
     * thread has been started (the orchestrator then waits for their watches on the server); run()
     * releases the holder and waits until every waiter has held and released the lock.
     */
    private final class Handoff {
        final String path;
        final int waiters;
        /** How long each waiter holds the lock before it releases (its critical section). */
        final long holdMs;
        final double[] acquired;
        final double[] released;
        final AtomicInteger holders = new AtomicInteger();
        final AtomicInteger violations = new AtomicInteger();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);
        final List<Thread> threads = new ArrayList<>();

        Handoff(String path, int waiters, long holdMs) {
            this.path = path;
            this.waiters = waiters;
            this.holdMs = holdMs;
            this.acquired = new double[waiters + 1];
            this.released = new double[waiters + 1];
        }

        void queue() throws Exception {
            Thread holder = new Thread(() -> hold(0, true), "holder");
            holder.setDaemon(true);
            threads.add(holder);
            holder.start();
            held.await();
            if (failure.get() != null) throw new RuntimeException("the holder failed", failure.get());
            for (int i = 1; i <= waiters; i++) {
                final int k = i;
                Thread t = new Thread(() -> hold(k, false), "waiter-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
        }

        private void hold(int k, boolean isHolder) {
            try {
                InterProcessMutex mutex = new InterProcessMutex(session(isHolder ? 0 : k - 1), path);
                mutex.acquire();
                if (holders.incrementAndGet() != 1) violations.incrementAndGet();
                acquired[k] = micros();
                if (isHolder) {
                    held.countDown();
                    go.await();
                } else if (holdMs > 0) {
                    Thread.sleep(holdMs);
                }
                released[k] = micros();
                holders.decrementAndGet();
                mutex.release();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
                held.countDown();
            }
        }

        void run(Json reply) throws Exception {
            go.countDown();
            for (Thread t : threads) t.join();
            if (failure.get() != null) throw new RuntimeException("a waiter failed", failure.get());
            reply.putRaw("acquiredUs", Json.array(acquired, acquired.length))
                    .putRaw("releasedUs", Json.array(released, released.length))
                    .put("violations", violations.get());
        }
    }

    // ------------------------------------------------------------------ read-write lock

    /** Session k's seed for the read-or-write choice: the same xorshift32 as bench/peers/rng.ts. */
    static int sessionSeed(int k) {
        int seed = 0x9e3779b9 ^ ((k + 1) * 0x85ebca6b);
        return seed == 0 ? 1 : seed;
    }

    static int xorshift32(int x) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return x;
    }

    /** The in-process check: a writer entering while anyone holds, or a reader while a writer holds. */
    private static final class RwHolds {
        private int readers;
        private int writers;
        int violations;
        int maxReaders;

        synchronized void enter(boolean write) {
            if (write) {
                if (readers != 0 || writers != 0) violations++;
                writers++;
            } else {
                if (writers != 0) violations++;
                readers++;
                maxReaders = Math.max(maxReaders, readers);
            }
        }

        synchronized void leave(boolean write) {
            if (write) writers--;
            else readers--;
        }
    }

    /** One thread per session, each with its own InterProcessReadWriteLock, reading or writing until the deadline. */
    private void rwlock(String path, double durationMs, int writePercent, Json reply) throws Exception {
        int n = clients.size();
        if (n == 0) throw new IllegalStateException("no sessions are open");
        RwHolds check = new RwHolds();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(n + 1);
        int[] reads = new int[n];
        int[] writes = new int[n];
        List<double[]> holds = new ArrayList<>();
        int[] holdLengths = new int[n];
        Thread[] threads = new Thread[n];
        long[] deadline = new long[1];
        for (int i = 0; i < n; i++) {
            final int k = i;
            holds.add(new double[1536]);
            threads[i] = new Thread(() -> {
                double[] h = holds.get(k);
                int len = 0;
                try {
                    InterProcessReadWriteLock rw = new InterProcessReadWriteLock(session(k), path);
                    InterProcessMutex readLock = rw.readLock();
                    InterProcessMutex writeLock = rw.writeLock();
                    int x = sessionSeed(k);
                    start.await();
                    while (System.nanoTime() < deadline[0]) {
                        x = xorshift32(x);
                        boolean write = Integer.remainderUnsigned(x, 100) < writePercent;
                        InterProcessMutex lock = write ? writeLock : readLock;
                        lock.acquire();
                        check.enter(write);
                        double t0 = micros();
                        double t1 = micros();
                        check.leave(write);
                        lock.release();
                        if (len + 3 > h.length) h = java.util.Arrays.copyOf(h, h.length * 2);
                        h[len++] = t0;
                        h[len++] = t1;
                        h[len++] = write ? 1 : 0;
                        if (write) writes[k]++;
                        else reads[k]++;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                holds.set(k, h);
                holdLengths[k] = len;
            }, "rw-" + i);
            threads[i].setDaemon(true);
            threads[i].start();
        }
        deadline[0] = System.nanoTime() + (long) (durationMs * 1e6);
        long t0 = System.nanoTime();
        start.await();
        for (Thread t : threads) t.join();
        double elapsedMs = (System.nanoTime() - t0) / 1e6;
        if (failure.get() != null) throw new RuntimeException("a contender failed", failure.get());
        StringBuilder all = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            double[] h = holds.get(i);
            for (int j = 0; j < holdLengths[i]; j++) {
                if (all.length() > 1) all.append(',');
                all.append(Json.number(h[j]));
            }
        }
        all.append(']');
        reply.putRaw("reads", ints(reads)).putRaw("writes", ints(writes)).put("elapsedMs", elapsedMs)
                .put("violations", check.violations).put("maxReaders", check.maxReaders).putRaw("holds", all.toString());
    }

    private static String ints(int[] values) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < values.length; i++) b.append(i == 0 ? "" : ",").append(values[i]);
        return b.append(']').toString();
    }

    // ------------------------------------------------------------------ leader election

    private void stopElection() {
        if (election == null) return;
        election.stop();
        election = null;
    }

    /**
     * One LeaderLatch per session (each with its listener). start() fills every session that has
     * no participant and waits until each has its node and exactly one leads; failover() closes
     * the leader and waits for the next one's isLeader callback.
     */
    private final class Election {
        final String path;
        final Part[] parts;
        int elections;
        int violations;
        CountDownLatch next;
        double nextAt;

        Election(String path, int sessions) {
            this.path = path;
            this.parts = new Part[sessions];
        }

        synchronized void onLeader(Part p) {
            double at = micros();
            elections++;
            for (Part o : parts) {
                if (o != null && o != p && !o.closing && o.latch.hasLeadership()) violations++;
            }
            if (next != null) {
                nextAt = at;
                next.countDown();
            }
        }

        void start() throws Exception {
            for (int i = 0; i < parts.length; i++) {
                if (parts[i] != null) continue;
                Part p = new Part(new LeaderLatch(session(i), path, "participant-" + i));
                p.latch.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        onLeader(p);
                    }

                    @Override
                    public void notLeader() {
                        // nothing: leadership is read with hasLeadership()
                    }
                });
                synchronized (this) {
                    parts[i] = p;
                }
                p.latch.start();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                int leaders = 0;
                boolean joined = true;
                for (Part p : parts) {
                    if (p.latch.getOurPath() == null) joined = false;
                    if (p.latch.hasLeadership()) leaders++;
                }
                if (joined && leaders == 1) return;
                if (System.nanoTime() > deadline) throw new IllegalStateException("no single leader with every participant in the race after 30 s (" + leaders + " leading)");
                Thread.sleep(2);
            }
        }

        void failover(Json reply) throws Exception {
            int at = -1;
            for (int i = 0; i < parts.length; i++) if (parts[i] != null && parts[i].latch.hasLeadership()) at = i;
            if (at < 0) throw new IllegalStateException("nobody leads");
            Part old = parts[at];
            CountDownLatch arrived = new CountDownLatch(1);
            synchronized (this) {
                elections = 0;
                violations = 0;
                next = arrived;
            }
            old.closing = true;
            double t0 = micros();
            try {
                old.latch.close();
                if (!arrived.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no new leader within 30 s");
                int leaders = 0;
                for (Part p : parts) if (p != null && p.latch.hasLeadership()) leaders++;
                synchronized (this) {
                    reply.put("failoverUs", nextAt - t0).put("leaders", leaders).put("elections", elections).put("violations", violations);
                    next = null;
                }
            } finally {
                synchronized (this) {
                    next = null;
                    parts[at] = null;
                }
            }
        }

        void stop() {
            for (int i = 0; i < parts.length; i++) {
                Part p = parts[i];
                parts[i] = null;
                if (p == null || p.latch.getState() != LeaderLatch.State.STARTED) continue;
                try {
                    p.latch.close();
                } catch (Exception e) {
                    // best effort: the sessions close next
                }
            }
        }
    }

    private static final class Part {
        final LeaderLatch latch;
        volatile boolean closing;

        Part(LeaderLatch latch) {
            this.latch = latch;
        }
    }

    // ------------------------------------------------------------------ queue

    /** Items as UTF-8 strings (Curator frames them in its own node format around these bytes). */
    private static final QueueSerializer<String> STRINGS = new QueueSerializer<String>() {
        @Override
        public byte[] serialize(String item) {
            return item.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String deserialize(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    };

    private void stopCache() {
        if (cacheRun == null) return;
        cacheRun.cache.close();
        cacheRun = null;
    }

    /** A CuratorCache (CuratorCache.build with no options) counting its NODE_CHANGED events. */
    private static final class CacheRun {
        final CuratorCache cache;
        final CountDownLatch initialized = new CountDownLatch(1);
        final Object progress = new Object();
        int expected;
        int events;
        long startNs;
        long lastNs;

        CacheRun(CuratorFramework client, String path) {
            cache = CuratorCache.build(client, path);
            cache.listenable().addListener(new CuratorCacheListener() {
                @Override
                public void event(Type type, ChildData oldData, ChildData data) {
                    if (type != Type.NODE_CHANGED) return;
                    synchronized (progress) {
                        events++;
                        lastNs = System.nanoTime();
                        if (expected > 0 && events >= expected) progress.notifyAll();
                    }
                }

                @Override
                public void initialized() {
                    initialized.countDown();
                }
            });
        }

        void load(Json reply) throws Exception {
            long t0 = System.nanoTime();
            cache.start();
            if (!initialized.await(600, TimeUnit.SECONDS)) throw new IllegalStateException("the cache did not initialize within 600 s");
            reply.put("elapsedMs", (System.nanoTime() - t0) / 1e6).put("nodes", cache.size());
        }

        void expect(int changes) {
            synchronized (progress) {
                expected = changes;
                events = 0;
                startNs = System.nanoTime();
                lastNs = startNs;
            }
        }

        void await(double timeoutMs, Json reply) throws InterruptedException {
            long deadline = System.nanoTime() + (long) (timeoutMs * 1e6);
            synchronized (progress) {
                while (events < expected) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) break;
                    TimeUnit.NANOSECONDS.timedWait(progress, left);
                }
                reply.put("elapsedMs", (lastNs - startNs) / 1e6).put("events", events);
            }
        }
    }

    private void stopDiscovery() {
        if (discoveryRun == null) return;
        discoveryRun.close();
        discoveryRun = null;
    }

    /**
     * curator-x-discovery with Map payloads (what a zk-recipes instance's JSON names by default):
     * one ServiceDiscovery that registers, another whose round-robin ServiceProvider picks.
     */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private static final class DiscoveryRun {
        /** Picks between two readings of the clock in the pick loop. */
        private static final int PICK_BATCH = 256;
        ServiceDiscovery<Map> registrar;
        ServiceDiscovery<Map> reader;
        ServiceProvider<Map> provider;

        void register(CuratorFramework client, String basePath, String name, int count, Json reply) throws Exception {
            closeQuietly(registrar);
            registrar = ServiceDiscoveryBuilder.builder(Map.class).client(client).basePath(basePath).build();
            registrar.start();
            double[] micros = new double[count];
            for (int k = 0; k < count; k++) {
                Map<String, Object> payload = new LinkedHashMap<>();
                payload.put("index", k);
                ServiceInstance<Map> instance = ServiceInstance.<Map>builder().name(name).address("127.0.0.1").port(8080)
                        .uriSpec(new UriSpec("{scheme}://{address}:{port}")).serviceType(ServiceType.DYNAMIC).payload(payload).build();
                long t0 = System.nanoTime();
                registrar.registerService(instance);
                micros[k] = (System.nanoTime() - t0) / 1_000.0;
            }
            reply.putRaw("latUs", Json.array(micros, micros.length));
        }

        void warm(CuratorFramework client, String basePath, String name, Json reply) throws Exception {
            closeQuietly(provider);
            closeQuietly(reader);
            provider = null;
            reader = ServiceDiscoveryBuilder.builder(Map.class).client(client).basePath(basePath).build();
            reader.start();
            ServiceProvider<Map> p = reader.serviceProviderBuilder().serviceName(name).providerStrategy(new RoundRobinStrategy<>()).build();
            long t0 = System.nanoTime();
            p.start();
            double elapsedMs = (System.nanoTime() - t0) / 1e6;
            provider = p;
            reply.put("elapsedMs", elapsedMs).put("instances", p.getAllInstances().size());
        }

        void pick(double durationMs, int check, Json reply) throws Exception {
            if (provider == null) throw new IllegalStateException("no provider is warmed");
            ServiceProvider<Map> p = provider;
            long picks = 0;
            int nulls = 0;
            long t0 = System.nanoTime();
            long end = t0 + (long) (durationMs * 1e6);
            long now = t0;
            while (now < end) {
                for (int i = 0; i < PICK_BATCH; i++) if (p.getInstance() == null) nulls++;
                picks += PICK_BATCH;
                now = System.nanoTime();
            }
            Set<String> ids = new HashSet<>();
            for (int i = 0; i < check; i++) {
                ServiceInstance<Map> instance = p.getInstance();
                if (instance == null) nulls++;
                else ids.add(instance.getId());
            }
            StringBuilder idsJson = new StringBuilder("[");
            for (String id : ids) idsJson.append(idsJson.length() > 1 ? "," : "").append(Json.quote(id));
            reply.put("picks", picks).put("elapsedMs", (now - t0) / 1e6).put("nulls", nulls).putRaw("ids", idsJson.append(']').toString());
        }

        void close() {
            // Closing a discovery unregisters its instances; a provider is closed on its own.
            closeQuietly(provider);
            closeQuietly(reader);
            closeQuietly(registrar);
            provider = null;
            reader = null;
            registrar = null;
        }

        private static void closeQuietly(java.io.Closeable c) {
            if (c == null) return;
            try {
                c.close();
            } catch (Exception e) {
                System.err.println("closing " + c + ": " + e);
            }
        }
    }

    private void stopQueue() {
        if (queueRun == null) return;
        queueRun.stop();
        queueRun = null;
    }

    /**
     * Producers on sessions 0 … P−1 and consumers on the next C sessions, each with its own
     * DistributedQueue built by QueueBuilder with its defaults (no lock path: items are deleted as
     * they are taken; puts in the background; consumers on the direct executor).
     */
    private final class QueueRun {
        final String path;
        final int producers;
        final int consumers;
        final int items;
        final List<DistributedQueue<String>> producerQueues = new ArrayList<>();
        final List<DistributedQueue<String>> consumerQueues = new ArrayList<>();
        final List<List<int[]>> received = new ArrayList<>();
        final Object progress = new Object();
        int consumed;
        double lastConsumedUs;
        double doneUs = -1;

        QueueRun(String path, int producers, int consumers, int items) {
            this.path = path;
            this.producers = producers;
            this.consumers = consumers;
            this.items = items;
        }

        void prepare() throws Exception {
            if (clients.size() < producers + consumers) throw new IllegalStateException(producers + " producers and " + consumers + " consumers need more sessions than " + clients.size());
            for (int k = 0; k < producers; k++) {
                DistributedQueue<String> q = QueueBuilder.builder(session(k), (QueueConsumer<String>) null, STRINGS, path).buildQueue();
                producerQueues.add(q);
                q.start();
            }
            for (int j = 0; j < consumers; j++) {
                List<int[]> mine = new ArrayList<>();
                received.add(mine);
                QueueConsumer<String> consumer = new QueueConsumer<String>() {
                    @Override
                    public void consumeMessage(String item) {
                        int colon = item.indexOf(':');
                        int[] got = {Integer.parseInt(item.substring(0, colon)), Integer.parseInt(item.substring(colon + 1))};
                        synchronized (progress) {
                            mine.add(got);
                            lastConsumedUs = micros();
                            if (++consumed == items) doneUs = lastConsumedUs;
                            progress.notifyAll();
                        }
                    }

                    @Override
                    public void stateChanged(CuratorFramework client, ConnectionState newState) {
                        // the sessions outlive the run
                    }
                };
                DistributedQueue<String> q = QueueBuilder.builder(session(producers + j), consumer, STRINGS, path).buildQueue();
                consumerQueues.add(q);
                q.start();
            }
        }

        void run(Json reply) throws Exception {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread[] threads = new Thread[producers];
            for (int k = 0; k < producers; k++) {
                final int mine = items / producers + (k < items % producers ? 1 : 0);
                final DistributedQueue<String> q = producerQueues.get(k);
                final int producer = k;
                threads[k] = new Thread(() -> {
                    try {
                        for (int s = 0; s < mine; s++) q.put(producer + ":" + s);
                        if (!q.flushPuts(60, TimeUnit.SECONDS)) throw new IllegalStateException("puts not flushed within 60 s");
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "producer-" + k);
                threads[k].setDaemon(true);
            }
            double t0 = micros();
            for (Thread t : threads) t.start();
            for (Thread t : threads) t.join();
            if (failure.get() != null) throw new RuntimeException("a producer failed", failure.get());
            // Every item is in; wait for the last to be consumed, or for consumption to stall.
            synchronized (progress) {
                while (doneUs < 0) {
                    int before = consumed;
                    progress.wait(10_000);
                    if (doneUs < 0 && consumed == before) break;
                }
            }
            Thread.sleep(100);
            StringBuilder all = new StringBuilder("[");
            double endUs;
            synchronized (progress) {
                endUs = doneUs >= 0 ? doneUs : lastConsumedUs;
                for (int j = 0; j < received.size(); j++) {
                    all.append(j == 0 ? "[" : ",[");
                    List<int[]> list = received.get(j);
                    for (int i = 0; i < list.size(); i++) all.append(i == 0 ? "" : ",").append(list.get(i)[0]).append(',').append(list.get(i)[1]);
                    all.append(']');
                }
            }
            all.append(']');
            reply.put("elapsedMs", (endUs - t0) / 1000.0).putRaw("received", all.toString());
        }

        void stop() {
            for (DistributedQueue<String> q : consumerQueues) closeQuietly(q);
            for (DistributedQueue<String> q : producerQueues) closeQuietly(q);
        }

        private void closeQuietly(DistributedQueue<String> q) {
            try {
                q.close();
            } catch (Exception e) {
                // best effort: the sessions close next
            }
        }
    }

    // ------------------------------------------------------------------ plumbing

    private static String mavenVersion(String group, String artifact) {
        String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = CuratorBench.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) return "unknown";
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static String str(Map<String, Object> a, String key) {
        Object v = a.get(key);
        if (!(v instanceof String)) throw new IllegalArgumentException(key + " must be a string");
        return (String) v;
    }

    private static double num(Map<String, Object> a, String key) {
        Object v = a.get(key);
        if (!(v instanceof Double)) throw new IllegalArgumentException(key + " must be a number");
        return (Double) v;
    }

    private static void emit(Json line) {
        synchronized (OUT) {
            try {
                OUT.write(line.toString());
                OUT.write('\n');
                OUT.flush();
            } catch (Exception e) {
                // stdout closed: the orchestrator is gone; stdin's end will stop us
            }
        }
    }

    /** A JSON object under construction, and a reader of flat JSON objects (strings, numbers, booleans, null). */
    static final class Json {
        private final StringBuilder sb = new StringBuilder("{");

        Json put(String key, Object value) {
            String v;
            if (value == null) v = "null";
            else if (value instanceof Boolean) v = value.toString();
            else if (value instanceof Number) v = number(((Number) value).doubleValue());
            else v = quote(value.toString());
            return putRaw(key, v);
        }

        Json putRaw(String key, String json) {
            if (sb.length() > 1) sb.append(',');
            sb.append(quote(key)).append(':').append(json);
            return this;
        }

        @Override
        public String toString() {
            return sb + "}";
        }

        static String number(double d) {
            if (d == Math.rint(d) && Math.abs(d) < 1e15) return Long.toString((long) d);
            return String.format(java.util.Locale.ROOT, "%.3f", d);
        }

        static String array(double[] values, int length) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < length; i++) b.append(i == 0 ? "" : ",").append(number(values[i]));
            return b.append(']').toString();
        }

        static String quote(String s) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') b.append('\\').append(c);
                else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
            return b.append('"').toString();
        }

        static Map<String, Object> parse(String text) {
            Map<String, Object> out = new LinkedHashMap<>();
            int[] at = {skip(text, 0)};
            expect(text, at, '{');
            at[0] = skip(text, at[0]);
            if (text.charAt(at[0]) == '}') return out;
            while (true) {
                at[0] = skip(text, at[0]);
                String key = readString(text, at);
                at[0] = skip(text, at[0]);
                expect(text, at, ':');
                at[0] = skip(text, at[0]);
                out.put(key, readValue(text, at));
                at[0] = skip(text, at[0]);
                char c = text.charAt(at[0]++);
                if (c == '}') return out;
                if (c != ',') throw new IllegalArgumentException("bad JSON at " + (at[0] - 1) + ": " + text);
            }
        }

        private static Object readValue(String t, int[] at) {
            char c = t.charAt(at[0]);
            if (c == '"') return readString(t, at);
            for (String word : new String[] {"true", "false", "null"}) {
                if (t.startsWith(word, at[0])) {
                    at[0] += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at[0];
            while (at[0] < t.length() && "+-0123456789.eE".indexOf(t.charAt(at[0])) >= 0) at[0]++;
            if (start == at[0]) throw new IllegalArgumentException("bad JSON value at " + start + ": " + t);
            return Double.valueOf(t.substring(start, at[0]));
        }

        private static String readString(String t, int[] at) {
            expect(t, at, '"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = t.charAt(at[0]++);
                if (c == '"') return b.toString();
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = t.charAt(at[0]++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u':
                        b.append((char) Integer.parseInt(t.substring(at[0], at[0] + 4), 16));
                        at[0] += 4;
                        break;
                    default: b.append(e);
                }
            }
        }

        private static void expect(String t, int[] at, char c) {
            if (at[0] >= t.length() || t.charAt(at[0]) != c) throw new IllegalArgumentException("expected '" + c + "' at " + at[0] + ": " + t);
            at[0]++;
        }

        private static int skip(String t, int i) {
            while (i < t.length() && Character.isWhitespace(t.charAt(i))) i++;
            return i;
        }
    }
}
