package zkrecipes.interop;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicNumber;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicValue;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.recipes.nodes.PersistentTtlNode;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBase;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.recipes.shared.SharedValue;
import org.apache.curator.framework.recipes.shared.SharedValueListener;
import org.apache.curator.framework.recipes.shared.SharedValueReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceInstanceBuilder;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.x.discovery.strategies.RandomStrategy;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.apache.curator.x.discovery.strategies.StickyStrategy;
import org.apache.zookeeper.CreateMode;

/**
 * A Curator client driven over stdin/stdout, for zk-recipes' interop tests and benchmarks.
 *
 * <p>Usage: {@code java zkrecipes.interop.CuratorPeer <connectString> <sessionTimeoutMs> [connectionTimeoutMs]}.
 *
 * <p>Protocol: one flat JSON object per line. A request is {@code {"id":N,"cmd":"mutex.acquire","name":"m1",...}}
 * ({@code id} is the request's, so a recipe's participant id is sent as {@code participantId});
 * its reply is {@code {"id":N,"ok":true,...}} or {@code {"id":N,"ok":false,"error":"..."}}. Unsolicited
 * events have no id: {@code {"event":"ready"}}, {@code {"event":"isLeader","name":"l1"}}... Recipe objects are
 * named, so one peer can hold several. Every command that names an object runs on that name's own
 * thread, in order (Curator's locks are owned by threads: a release must run on the acquiring thread);
 * other commands run on a shared pool, so a blocked acquire never stops the peer.
 */
public final class CuratorPeer {
    private static final Writer OUT =
            new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8);

    private final CuratorFramework client;
    private final Map<String, Object> objects = new ConcurrentHashMap<>();
    private final Map<String, ExecutorService> nameThreads = new ConcurrentHashMap<>();
    private final ExecutorService pool = Executors.newCachedThreadPool(daemonThreads("peer-pool"));

    private CuratorPeer(CuratorFramework client) {
        this.client = client;
    }

    public static void main(String[] args) throws Exception {
        // Only protocol lines may reach stdout: anything else printed by a library goes to stderr.
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, "UTF-8"));
        if (args.length < 2) {
            System.err.println("usage: CuratorPeer <connectString> <sessionTimeoutMs> [connectionTimeoutMs]");
            System.exit(2);
        }
        int sessionTimeoutMs = Integer.parseInt(args[1]);
        int connectionTimeoutMs = args.length > 2 ? Integer.parseInt(args[2]) : 15_000;
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[0])
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(connectionTimeoutMs)
                .retryPolicy(new RetryNTimes(10, 100))
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> emit(event("state").with("state", state.name())));
        client.getUnhandledErrorListenable().addListener((message, e) ->
                emit(event("unhandledError").with("message", message).with("error", describe(e))));
        client.start();
        if (!client.blockUntilConnected(connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
            emit(event("fatal").with("error", "could not connect to " + args[0] + " within " + connectionTimeoutMs + " ms"));
            client.close();
            System.exit(3);
        }
        CuratorPeer peer = new CuratorPeer(client);
        emit(event("ready").with("sessionId", sessionIdHex(client)));
        peer.readCommands();
    }

    // ------------------------------------------------------------------ command loop

    private void readCommands() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            Map<String, Object> request;
            try {
                request = Json.parse(line);
            } catch (RuntimeException e) {
                emit(event("protocolError").with("error", describe(e)).with("line", line));
                continue;
            }
            Object idValue = request.get("id");
            long id = idValue instanceof Number ? ((Number) idValue).longValue() : -1;
            String cmd = request.get("cmd") instanceof String ? (String) request.get("cmd") : "";
            if (cmd.equals("exit")) {
                emit(new Json.Obj().with("id", id).with("ok", true));
                shutdown(0);
                return;
            }
            Object name = request.get("name");
            ExecutorService executor = name instanceof String ? threadFor((String) name) : pool;
            executor.execute(() -> run(id, cmd, request));
        }
        shutdown(0);
    }

    private ExecutorService threadFor(String name) {
        return nameThreads.computeIfAbsent(name, n -> Executors.newSingleThreadExecutor(daemonThreads("peer-" + n)));
    }

    private void run(long id, String cmd, Map<String, Object> args) {
        Json.Obj reply = new Json.Obj().with("id", id).with("ok", true);
        try {
            handle(cmd, args, reply);
        } catch (Throwable e) {
            reply = new Json.Obj().with("id", id).with("ok", false).with("error", describe(e));
        }
        emit(reply);
    }

    private void shutdown(int status) {
        Thread watchdog = new Thread(() -> {
            sleep(5_000);
            Runtime.getRuntime().halt(status == 0 ? 4 : status);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        for (Object o : objects.values()) {
            if (o instanceof Closeable) {
                try {
                    ((Closeable) o).close();
                } catch (Throwable ignored) {
                    // best effort: the session's end removes every ephemeral node anyway
                }
            }
        }
        client.close();
        System.exit(status);
    }

    // ------------------------------------------------------------------ commands

    private void handle(String cmd, Map<String, Object> a, Json.Obj reply) throws Exception {
        switch (cmd) {
            case "ping":
                reply.with("pong", true);
                return;
            case "session":
                reply.with("sessionId", sessionIdHex(client))
                        .with("sessionPassword", hex(client.getZookeeperClient().getZooKeeper().getSessionPasswd()));
                return;

            case "session.injectExpiration":
                // Client-side only (ZooKeeper's test hook): the handle acts as if the session expired
                // and Curator opens a new one; the old session lives on the server until it times out.
                client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
                return;

            // ---- InterProcessMutex
            case "mutex.new":
                define(a, new InterProcessMutex(client, str(a, "path")));
                return;
            case "mutex.acquire": {
                InterProcessMutex m = get(a, InterProcessMutex.class);
                long timeoutMs = num(a, "timeoutMs", -1);
                if (timeoutMs < 0) {
                    m.acquire();
                    reply.with("acquired", true);
                } else {
                    reply.with("acquired", m.acquire(timeoutMs, TimeUnit.MILLISECONDS));
                }
                return;
            }
            case "mutex.release":
                get(a, InterProcessMutex.class).release();
                return;
            case "mutex.isOwned":
                reply.with("owned", get(a, InterProcessMutex.class).isOwnedByCurrentThread());
                return;
            case "mutex.participants":
                reply.with("participants", new ArrayList<>(get(a, InterProcessMutex.class).getParticipantNodes()));
                return;

            // ---- InterProcessReadWriteLock
            case "rwlock.new":
                define(a, new InterProcessReadWriteLock(client, str(a, "path")));
                return;
            case "rwlock.acquireRead":
            case "rwlock.acquireWrite": {
                InterProcessReadWriteLock l = get(a, InterProcessReadWriteLock.class);
                InterProcessMutex m = cmd.endsWith("Read") ? l.readLock() : l.writeLock();
                long timeoutMs = num(a, "timeoutMs", -1);
                if (timeoutMs < 0) {
                    m.acquire();
                    reply.with("acquired", true);
                } else {
                    reply.with("acquired", m.acquire(timeoutMs, TimeUnit.MILLISECONDS));
                }
                return;
            }
            case "rwlock.releaseRead":
                get(a, InterProcessReadWriteLock.class).readLock().release();
                return;
            case "rwlock.releaseWrite":
                get(a, InterProcessReadWriteLock.class).writeLock().release();
                return;

            // ---- InterProcessSemaphoreV2
            case "semaphore.new":
                define(a, new Semaphore(new InterProcessSemaphoreV2(client, str(a, "path"), (int) num(a, "maxLeases", 1))));
                return;
            case "semaphore.acquire": {
                Semaphore s = get(a, Semaphore.class);
                int qty = (int) num(a, "qty", 1);
                long timeoutMs = num(a, "timeoutMs", -1);
                Collection<Lease> got = timeoutMs < 0
                        ? s.semaphore.acquire(qty)
                        : s.semaphore.acquire(qty, timeoutMs, TimeUnit.MILLISECONDS);
                if (got != null) s.leases.addAll(got);
                reply.with("acquired", got != null).with("leases", s.leases.size());
                return;
            }
            case "semaphore.releaseAll": {
                Semaphore s = get(a, Semaphore.class);
                int n = s.leases.size();
                s.semaphore.returnAll(new ArrayList<>(s.leases));
                s.leases.clear();
                reply.with("released", n).with("leases", 0);
                return;
            }
            case "semaphore.participants":
                reply.with("participants", new ArrayList<>(get(a, Semaphore.class).semaphore.getParticipantNodes()));
                return;

            // ---- LeaderLatch
            case "latch.new": {
                String name = str(a, "name");
                LeaderLatch latch = new LeaderLatch(client, str(a, "path"), str(a, "participantId"));
                latch.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        emit(event("isLeader").with("name", name));
                    }

                    @Override
                    public void notLeader() {
                        emit(event("notLeader").with("name", name));
                    }
                });
                define(a, latch);
                return;
            }
            case "latch.start":
                get(a, LeaderLatch.class).start();
                return;
            case "latch.close": {
                LeaderLatch latch = get(a, LeaderLatch.class);
                latch.close(bool(a, "notify", false) ? LeaderLatch.CloseMode.NOTIFY_LEADER : LeaderLatch.CloseMode.SILENT);
                return;
            }
            case "latch.hasLeadership":
                reply.with("leader", get(a, LeaderLatch.class).hasLeadership());
                return;
            case "latch.await":
                reply.with("leader", get(a, LeaderLatch.class).await(num(a, "timeoutMs", 0), TimeUnit.MILLISECONDS));
                return;
            case "latch.leader": {
                Participant p = get(a, LeaderLatch.class).getLeader();
                reply.with("leaderId", p.getId()).with("isLeader", p.isLeader());
                return;
            }
            case "latch.participants":
                reply.with("ids", participantIds(get(a, LeaderLatch.class).getParticipants()));
                return;
            case "latch.path":
                reply.with("path", get(a, LeaderLatch.class).getOurPath());
                return;

            // ---- LeaderSelector
            case "selector.new": {
                Selector s = new Selector(str(a, "name"));
                s.selector = new LeaderSelector(client, str(a, "path"), s);
                if (a.containsKey("participantId")) s.selector.setId(str(a, "participantId"));
                if (bool(a, "autoRequeue", false)) s.selector.autoRequeue();
                define(a, s);
                return;
            }
            case "selector.start":
                get(a, Selector.class).selector.start();
                return;
            case "selector.requeue":
                reply.with("requeued", get(a, Selector.class).selector.requeue());
                return;
            case "selector.release": {
                CountDownLatch term = get(a, Selector.class).term;
                if (term != null) term.countDown();
                reply.with("released", term != null);
                return;
            }
            case "selector.hasLeadership":
                reply.with("leader", get(a, Selector.class).selector.hasLeadership());
                return;
            case "selector.participants":
                reply.with("ids", participantIds(get(a, Selector.class).selector.getParticipants()));
                return;
            case "selector.close":
                get(a, Selector.class).close();
                return;

            // ---- DistributedQueue<String>
            case "queue.new": {
                String name = str(a, "name");
                QueueConsumer<String> consumer = bool(a, "consume", true) ? new QueueConsumer<String>() {
                    @Override
                    public void consumeMessage(String message) {
                        emit(event("item").with("name", name).with("value", message).with("atEpochMs", System.currentTimeMillis()));
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState state) {
                        // the peer reports connection states itself
                    }
                } : null;
                QueueBuilder<String> builder = QueueBuilder.builder(client, consumer, new Utf8Serializer(), str(a, "path"))
                        .putInBackground(false);
                if (a.get("lockPath") instanceof String) builder.lockPath((String) a.get("lockPath"));
                String kind = a.get("kind") instanceof String ? (String) a.get("kind") : "plain";
                switch (kind) {
                    case "plain":
                        define(a, builder.buildQueue());
                        break;
                    case "priority":
                        define(a, builder.buildPriorityQueue(0));
                        break;
                    case "delay":
                        define(a, builder.buildDelayQueue());
                        break;
                    case "id":
                        define(a, builder.buildIdQueue());
                        break;
                    default:
                        throw new IllegalArgumentException("unknown queue kind \"" + kind + "\"");
                }
                return;
            }
            case "queue.start":
                get(a, QueueBase.class).start();
                return;
            case "queue.put":
                putItem(get(a, QueueBase.class), a);
                return;
            case "queue.remove":
                reply.with("removed", ((DistributedIdQueue<?>) get(a, DistributedIdQueue.class)).remove(str(a, "itemId")));
                return;
            case "queue.close":
                get(a, QueueBase.class).close();
                return;

            // ---- SimpleDistributedQueue
            case "squeue.new":
                define(a, new SimpleDistributedQueue(client, str(a, "path")));
                return;
            case "squeue.offer":
                reply.with("offered", get(a, SimpleDistributedQueue.class).offer(str(a, "value").getBytes(StandardCharsets.UTF_8)));
                return;
            case "squeue.take": {
                SimpleDistributedQueue q = get(a, SimpleDistributedQueue.class);
                long timeoutMs = num(a, "timeoutMs", -1);
                byte[] value = timeoutMs < 0 ? q.take() : q.poll(timeoutMs, TimeUnit.MILLISECONDS);
                reply.with("value", value == null ? null : new String(value, StandardCharsets.UTF_8));
                return;
            }

            // ---- DistributedAtomicLong, DistributedAtomicInteger (values as decimal strings), DistributedAtomicValue (UTF-8)
            case "atomic.new":
                define(a, Atomic.create(client, a));
                return;
            case "atomic.get":
                get(a, Atomic.class).outcome(reply, get(a, Atomic.class).get());
                return;
            case "atomic.increment":
                get(a, Atomic.class).outcome(reply, get(a, Atomic.class).number().increment());
                return;
            case "atomic.add":
                get(a, Atomic.class).add(reply, str(a, "delta"));
                return;
            case "atomic.incrementMany": {
                Atomic atomic = get(a, Atomic.class);
                List<String> values = new ArrayList<>();
                for (long i = num(a, "count", 1); i > 0; i--) {
                    AtomicValue<?> v = atomic.number().increment();
                    if (v.succeeded()) values.add(String.valueOf(v.postValue()));
                }
                reply.with("values", values);
                return;
            }
            case "atomic.compareAndSet":
                get(a, Atomic.class).compareAndSet(reply, str(a, "expected"), str(a, "value"));
                return;
            case "atomic.trySet":
                get(a, Atomic.class).trySet(reply, str(a, "value"));
                return;
            case "atomic.forceSet":
                get(a, Atomic.class).forceSet(str(a, "value"));
                return;
            case "atomic.initialize":
                reply.with("initialized", get(a, Atomic.class).initialize(str(a, "value")));
                return;

            // ---- SharedValue (values as UTF-8); each newer value is an event {"event":"sharedValueChanged","name","value"}
            case "sharedValue.new": {
                String valueName = str(a, "name");
                SharedValue shared = new SharedValue(client, str(a, "path"), str(a, "seed").getBytes(StandardCharsets.UTF_8));
                shared.getListenable().addListener(new SharedValueListener() {
                    @Override
                    public void valueHasChanged(SharedValueReader reader, byte[] newValue) {
                        emit(event("sharedValueChanged").with("name", valueName).with("value", new String(newValue, StandardCharsets.UTF_8)));
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState state) {
                        // the peer reports its states already
                    }
                });
                shared.start();
                define(a, new SharedValueHolder(shared));
                return;
            }
            case "sharedValue.get":
                get(a, SharedValueHolder.class).describe(reply);
                return;
            case "sharedValue.remember": {
                // Curator's VersionedValue cannot be made outside its package: trySet uses the one kept here.
                SharedValueHolder holder = get(a, SharedValueHolder.class);
                holder.remembered = holder.shared.getVersionedValue();
                holder.describe(reply);
                return;
            }
            case "sharedValue.set":
                get(a, SharedValueHolder.class).shared.setValue(str(a, "value").getBytes(StandardCharsets.UTF_8));
                return;
            case "sharedValue.trySet": {
                SharedValueHolder holder = get(a, SharedValueHolder.class);
                if (holder.remembered == null) throw new IllegalStateException("sharedValue.remember first");
                reply.with("succeeded", holder.shared.trySetValue(holder.remembered, str(a, "value").getBytes(StandardCharsets.UTF_8)));
                holder.describe(reply);
                return;
            }

            // ---- DistributedBarrier and DistributedDoubleBarrier (waits without timeoutMs wait as long as it takes)
            case "barrier.new":
                define(a, new DistributedBarrier(client, str(a, "path")));
                return;
            case "barrier.set":
                get(a, DistributedBarrier.class).setBarrier();
                return;
            case "barrier.remove":
                get(a, DistributedBarrier.class).removeBarrier();
                return;
            case "barrier.wait": {
                DistributedBarrier b = get(a, DistributedBarrier.class);
                long timeoutMs = num(a, "timeoutMs", -1);
                if (timeoutMs < 0) {
                    b.waitOnBarrier();
                    reply.with("passed", true);
                } else {
                    reply.with("passed", b.waitOnBarrier(timeoutMs, TimeUnit.MILLISECONDS));
                }
                return;
            }
            case "doubleBarrier.new":
                define(a, new DistributedDoubleBarrier(client, str(a, "path"), (int) num(a, "memberQty", 1)));
                return;
            case "doubleBarrier.enter":
                reply.with("entered", get(a, DistributedDoubleBarrier.class).enter(num(a, "timeoutMs", 30_000), TimeUnit.MILLISECONDS));
                return;
            case "doubleBarrier.leave":
                reply.with("left", get(a, DistributedDoubleBarrier.class).leave(num(a, "timeoutMs", 30_000), TimeUnit.MILLISECONDS));
                return;

            // ---- PersistentNode and PersistentTtlNode (data as UTF-8)
            case "persistentNode.new": {
                PersistentNode node = new PersistentNode(client, CreateMode.valueOf(str(a, "mode")), bool(a, "protected", false),
                        str(a, "path"), str(a, "data").getBytes(StandardCharsets.UTF_8));
                node.getListenable().addListener(path -> emit(event("nodeCreated").with("name", str(a, "name")).with("path", path)));
                define(a, node);
                return;
            }
            case "persistentNode.start":
                get(a, PersistentNode.class).start();
                return;
            case "persistentNode.waitForInitialCreate":
                reply.with("created", get(a, PersistentNode.class).waitForInitialCreate(num(a, "timeoutMs", 10_000), TimeUnit.MILLISECONDS));
                return;
            case "persistentNode.path":
                reply.with("path", get(a, PersistentNode.class).getActualPath());
                return;
            case "persistentNode.setData":
                get(a, PersistentNode.class).setData(str(a, "data").getBytes(StandardCharsets.UTF_8));
                return;
            case "ttlNode.new":
                define(a, new PersistentTtlNode(client, str(a, "path"), num(a, "ttlMs", 1_000), str(a, "data").getBytes(StandardCharsets.UTF_8)));
                return;
            case "ttlNode.start":
                get(a, PersistentTtlNode.class).start();
                return;
            case "ttlNode.waitForInitialCreate":
                reply.with("created", get(a, PersistentTtlNode.class).waitForInitialCreate(num(a, "timeoutMs", 10_000), TimeUnit.MILLISECONDS));
                return;

            // ---- plain node operations (data as UTF-8), for tests that change a tree from the Java side
            case "zk.create":
                client.create().creatingParentsIfNeeded().forPath(str(a, "path"), str(a, "data").getBytes(StandardCharsets.UTF_8));
                return;
            case "zk.setData":
                client.setData().forPath(str(a, "path"), str(a, "data").getBytes(StandardCharsets.UTF_8));
                return;
            case "zk.delete":
                client.delete().deletingChildrenIfNeeded().forPath(str(a, "path"));
                return;

            // ---- compressed data, through the client's default GzipCompressionProvider; bytes as base64
            case "gzip.create":
                client.create().compressed().creatingParentsIfNeeded().forPath(str(a, "path"), bytes(a));
                return;
            case "gzip.setData":
                client.setData().compressed().forPath(str(a, "path"), bytes(a));
                return;
            case "gzip.transaction": {
                // One create or setData, compressed, in a transaction (CuratorOp's .compressed()).
                String path = str(a, "path");
                boolean create = str(a, "op").equals("create");
                client.transaction().forOperations(create
                        ? client.transactionOp().create().compressed().forPath(path, bytes(a))
                        : client.transactionOp().setData().compressed().forPath(path, bytes(a)));
                return;
            }
            case "gzip.getData": {
                byte[] data = bool(a, "decompressed", false)
                        ? client.getData().decompressed().forPath(str(a, "path"))
                        : client.getData().forPath(str(a, "path"));
                reply.with("base64", Base64.getEncoder().encodeToString(data));
                return;
            }

            // ---- CuratorCache: events as {"event":"cacheEvent","name","type","path","data"}; snapshot as parallel lists
            case "cache.new": {
                String name = str(a, "name");
                CuratorCache cache = CuratorCache.build(client, str(a, "path"));
                cache.listenable().addListener(new CuratorCacheListener() {
                    @Override
                    public void event(Type type, ChildData oldData, ChildData data) {
                        ChildData node = data != null ? data : oldData;
                        emit(CuratorPeer.event("cacheEvent").with("name", name).with("type", type.name()).with("path", node.getPath())
                                .with("data", data == null || data.getData() == null ? null : new String(data.getData(), StandardCharsets.UTF_8)));
                    }

                    @Override
                    public void initialized() {
                        emit(CuratorPeer.event("cacheInitialized").with("name", name));
                    }
                });
                define(a, cache);
                return;
            }
            case "cache.start":
                get(a, CuratorCache.class).start();
                return;
            case "cache.snapshot": {
                List<String> paths = new ArrayList<>();
                List<String> datas = new ArrayList<>();
                get(a, CuratorCache.class).stream().sorted().forEach(d -> {
                    paths.add(d.getPath());
                    datas.add(d.getData() == null ? "" : new String(d.getData(), StandardCharsets.UTF_8));
                });
                reply.with("paths", paths).with("datas", datas);
                return;
            }

            // ---- GroupMember (payloads as UTF-8)
            case "group.new":
                define(a, new GroupMember(client, str(a, "path"), str(a, "memberId"), str(a, "payload").getBytes(StandardCharsets.UTF_8)));
                return;
            case "group.start":
                get(a, GroupMember.class).start();
                return;
            case "group.members": {
                List<String> ids = new ArrayList<>();
                List<String> payloads = new ArrayList<>();
                new java.util.TreeMap<>(get(a, GroupMember.class).getCurrentMembers()).forEach((id, payload) -> {
                    ids.add(id);
                    payloads.add(new String(payload, StandardCharsets.UTF_8));
                });
                reply.with("ids", ids).with("payloads", payloads);
                return;
            }
            case "group.setThisData":
                get(a, GroupMember.class).setThisData(str(a, "payload").getBytes(StandardCharsets.UTF_8));
                return;

            // ---- curator-x-discovery with ServiceDetails payloads; `service` is the service's name (`name` names the object)
            case "discovery.new": {
                ServiceDiscovery<ServiceDetails> discovery = ServiceDiscoveryBuilder.builder(ServiceDetails.class).client(client)
                        .basePath(str(a, "basePath")).serializer(new JsonInstanceSerializer<>(ServiceDetails.class)).build();
                discovery.start();
                define(a, discovery);
                return;
            }
            case "discovery.register":
                discovery(a).registerService(serviceInstance(a));
                return;
            case "discovery.update":
                discovery(a).updateService(serviceInstance(a));
                return;
            case "discovery.unregister":
                discovery(a).unregisterService(serviceInstance(a));
                return;
            case "discovery.serialize":
                reply.with("json", new String(new JsonInstanceSerializer<>(ServiceDetails.class, bool(a, "compatible", true)).serialize(serviceInstance(a)), StandardCharsets.UTF_8));
                return;
            case "discovery.queryForNames":
                reply.with("names", new ArrayList<>(new java.util.TreeSet<>(discovery(a).queryForNames())));
                return;
            case "discovery.queryForInstances": {
                List<String> ids = new ArrayList<>();
                for (ServiceInstance<ServiceDetails> i : discovery(a).queryForInstances(str(a, "service"))) ids.add(i.getId());
                java.util.Collections.sort(ids);
                reply.with("ids", ids);
                return;
            }
            case "discovery.queryForInstance":
                describeInstance(discovery(a).queryForInstance(str(a, "service"), str(a, "instanceId")), reply);
                return;

            // ---- Curator's ServiceProvider and ServiceCache over a discovery named by `discovery`
            case "discovery.provider.new": {
                String strategy = a.get("strategy") instanceof String ? str(a, "strategy") : "roundRobin";
                ServiceProvider<ServiceDetails> provider = discoveryNamed(str(a, "discovery")).serviceProviderBuilder().serviceName(str(a, "service"))
                        .providerStrategy(strategy.equals("random") ? new RandomStrategy<>() : strategy.equals("sticky") ? new StickyStrategy<>(new RoundRobinStrategy<>()) : new RoundRobinStrategy<>())
                        .build();
                provider.start();
                define(a, provider);
                return;
            }
            case "discovery.provider.getInstance":
                describeInstance(provider(a).getInstance(), reply);
                return;
            case "discovery.provider.allIds":
                reply.with("ids", sortedIds(provider(a).getAllInstances()));
                return;
            case "discovery.provider.noteError":
                for (ServiceInstance<ServiceDetails> i : provider(a).getAllInstances()) {
                    if (i.getId().equals(str(a, "instanceId"))) provider(a).noteError(i);
                }
                return;
            case "discovery.cache.new": {
                // Each change is an event with the ids then held, so a test waits for a list, not for time.
                String cacheName = str(a, "name");
                ServiceCache<ServiceDetails> cache = discoveryNamed(str(a, "discovery")).serviceCacheBuilder().name(str(a, "service")).build();
                cache.addListener(new ServiceCacheListener() {
                    @Override
                    public void cacheChanged() {
                        emit(event("serviceCacheChanged").with("name", cacheName).with("ids", sortedIds(cache.getInstances())));
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState state) {
                        // the peer reports its states already
                    }
                });
                cache.start();
                define(a, cache);
                return;
            }
            case "discovery.cache.ids":
                reply.with("ids", sortedIds(serviceCache(a).getInstances()));
                return;

            // ---- benchmark
            case "bench.mutexLoop":
                benchMutexLoop(str(a, "path"), (int) num(a, "iterations", 1000), (int) num(a, "warmup", 0), reply);
                return;

            case "forget":
                // drops a named object (after closing it, if it can be closed)
                Object o = objects.remove(str(a, "name"));
                if (o instanceof Closeable) ((Closeable) o).close();
                reply.with("existed", o != null);
                return;

            default:
                throw new IllegalArgumentException("unknown command " + (cmd.isEmpty() ? "(none)" : cmd));
        }
    }

    private void benchMutexLoop(String path, int iterations, int warmup, Json.Obj reply) throws Exception {
        if (iterations < 1) throw new IllegalArgumentException("iterations must be at least 1");
        InterProcessMutex mutex = new InterProcessMutex(client, path);
        for (int i = 0; i < warmup; i++) {
            mutex.acquire();
            mutex.release();
        }
        long[] micros = new long[iterations];
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            mutex.acquire();
            mutex.release();
            micros[i] = (System.nanoTime() - t0) / 1_000;
        }
        long totalNanos = System.nanoTime() - start;
        Arrays.sort(micros);
        reply.with("count", iterations)
                .with("p50Us", percentile(micros, 0.50))
                .with("p90Us", percentile(micros, 0.90))
                .with("p99Us", percentile(micros, 0.99))
                .with("maxUs", micros[iterations - 1])
                .with("totalMs", totalNanos / 1e6);
    }

    /** Nearest-rank percentile of sorted values. */
    private static long percentile(long[] sorted, double p) {
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    // ------------------------------------------------------------------ recipe holders

    /** The payload of the discovery commands' instances: a Java class of ours, which Jackson reads by its @class. */
    public static final class ServiceDetails {
        public String description;
        public int weight;
    }

    @SuppressWarnings("unchecked")
    private ServiceDiscovery<ServiceDetails> discovery(Map<String, Object> a) {
        return get(a, ServiceDiscovery.class);
    }

    @SuppressWarnings("unchecked")
    private ServiceDiscovery<ServiceDetails> discoveryNamed(String name) {
        Object o = objects.get(name);
        if (!(o instanceof ServiceDiscovery)) throw new IllegalStateException("no discovery named \"" + name + "\"");
        return (ServiceDiscovery<ServiceDetails>) o;
    }

    @SuppressWarnings("unchecked")
    private ServiceProvider<ServiceDetails> provider(Map<String, Object> a) {
        return get(a, ServiceProvider.class);
    }

    @SuppressWarnings("unchecked")
    private ServiceCache<ServiceDetails> serviceCache(Map<String, Object> a) {
        return get(a, ServiceCache.class);
    }

    private static List<String> sortedIds(Collection<ServiceInstance<ServiceDetails>> instances) {
        List<String> ids = new ArrayList<>();
        for (ServiceInstance<ServiceDetails> i : instances) ids.add(i.getId());
        java.util.Collections.sort(ids);
        return ids;
    }

    /** An instance's fields as Curator read them, its payload's included; `found` false for none. */
    private static void describeInstance(ServiceInstance<ServiceDetails> i, Json.Obj reply) throws Exception {
        reply.with("found", i != null);
        if (i == null) return;
        reply.with("instanceId", i.getId()).with("address", i.getAddress()).with("port", i.getPort()).with("sslPort", i.getSslPort())
                .with("serviceType", i.getServiceType().name()).with("enabled", i.isEnabled())
                .with("registrationTimeUTC", i.getRegistrationTimeUTC())
                .with("uri", i.getUriSpec() == null ? null : i.buildUriSpec())
                .with("description", i.getPayload() == null ? null : i.getPayload().description)
                .with("weight", i.getPayload() == null ? null : i.getPayload().weight)
                .with("json", new String(new JsonInstanceSerializer<>(ServiceDetails.class).serialize(i), StandardCharsets.UTF_8));
    }

    /** An instance from the flat arguments: service, instanceId, address?, port?, sslPort?, uriSpec?, serviceType?, registrationTimeUTC?, description?, weight?, enabled?. */
    private static ServiceInstance<ServiceDetails> serviceInstance(Map<String, Object> a) throws Exception {
        ServiceInstanceBuilder<ServiceDetails> b = ServiceInstance.<ServiceDetails>builder().name(str(a, "service")).id(str(a, "instanceId"));
        if (a.get("address") instanceof String) b.address(str(a, "address"));
        if (a.get("port") != null) b.port((int) num(a, "port", 0));
        if (a.get("sslPort") != null) b.sslPort((int) num(a, "sslPort", 0));
        if (a.get("uriSpec") instanceof String) b.uriSpec(new UriSpec(str(a, "uriSpec")));
        if (a.get("serviceType") instanceof String) b.serviceType(ServiceType.valueOf(str(a, "serviceType")));
        if (a.get("registrationTimeUTC") != null) b.registrationTimeUTC(num(a, "registrationTimeUTC", 0));
        b.enabled(bool(a, "enabled", true));
        if (a.get("description") instanceof String) {
            ServiceDetails details = new ServiceDetails();
            details.description = str(a, "description");
            details.weight = (int) num(a, "weight", 0);
            b.payload(details);
        }
        return b.build();
    }

    private static final class Semaphore implements Closeable {
        final InterProcessSemaphoreV2 semaphore;
        final List<Lease> leases = new ArrayList<>();

        Semaphore(InterProcessSemaphoreV2 semaphore) {
            this.semaphore = semaphore;
        }

        @Override
        public void close() {
            semaphore.returnAll(new ArrayList<>(leases));
            leases.clear();
        }
    }

    /** A LeaderSelector whose leadership lasts until `selector.release` (or an interruption). */
    private static final class Selector extends LeaderSelectorListenerAdapter implements Closeable {
        final String name;
        LeaderSelector selector;
        volatile CountDownLatch term;

        Selector(String name) {
            this.name = name;
        }

        @Override
        public void takeLeadership(CuratorFramework c) throws Exception {
            CountDownLatch release = new CountDownLatch(1);
            term = release;
            emit(event("takeLeadership").with("name", name));
            boolean interrupted = false;
            try {
                release.await();
            } catch (InterruptedException e) {
                interrupted = true;
                throw e;
            } finally {
                term = null;
                emit(event("leadershipEnded").with("name", name).with("interrupted", interrupted));
            }
        }

        @Override
        public void close() {
            selector.close();
        }
    }

    /** A Curator SharedValue, and the versioned value its trySet commands compare against. */
    private static final class SharedValueHolder implements Closeable {
        final SharedValue shared;
        VersionedValue<byte[]> remembered;

        SharedValueHolder(SharedValue shared) {
            this.shared = shared;
        }

        void describe(Json.Obj reply) {
            VersionedValue<byte[]> seen = shared.getVersionedValue();
            reply.with("value", new String(seen.getValue(), StandardCharsets.UTF_8)).with("version", seen.getVersion());
        }

        @Override
        public void close() throws java.io.IOException {
            shared.close();
        }
    }

    /** One of Curator's atomic values, taking and giving its values as text. */
    private static final class Atomic {
        final String kind;
        final DistributedAtomicNumber<?> number;
        final DistributedAtomicValue bytes;

        private Atomic(String kind, DistributedAtomicNumber<?> number, DistributedAtomicValue bytes) {
            this.kind = kind;
            this.number = number;
            this.bytes = bytes;
        }

        static Atomic create(CuratorFramework client, Map<String, Object> a) {
            String path = str(a, "path");
            org.apache.curator.RetryPolicy retry = new RetryNTimes((int) num(a, "retries", 10), (int) num(a, "sleepMs", 10));
            PromotedToLock promoted = a.get("lockPath") instanceof String
                    ? PromotedToLock.builder().lockPath((String) a.get("lockPath"))
                            .retryPolicy(new RetryNTimes((int) num(a, "lockRetries", 0), 10)).build()
                    : null;
            String kind = str(a, "kind");
            switch (kind) {
                case "long":
                    return new Atomic(kind, new DistributedAtomicLong(client, path, retry, promoted), null);
                case "int":
                    return new Atomic(kind, new DistributedAtomicInteger(client, path, retry, promoted), null);
                case "value":
                    return new Atomic(kind, null, new DistributedAtomicValue(client, path, retry, promoted));
                default:
                    throw new IllegalArgumentException("unknown atomic kind \"" + kind + "\"");
            }
        }

        DistributedAtomicNumber<?> number() {
            if (number == null) throw new IllegalStateException("a " + kind + " is not a number");
            return number;
        }

        AtomicValue<?> get() throws Exception {
            return number != null ? number.get() : bytes.get();
        }

        @SuppressWarnings("unchecked")
        void add(Json.Obj reply, String delta) throws Exception {
            if (kind.equals("long")) outcome(reply, ((DistributedAtomicNumber<Long>) number).add(Long.parseLong(delta)));
            else outcome(reply, ((DistributedAtomicNumber<Integer>) number()).add(Integer.parseInt(delta)));
        }

        @SuppressWarnings("unchecked")
        void compareAndSet(Json.Obj reply, String expected, String value) throws Exception {
            if (kind.equals("long")) outcome(reply, ((DistributedAtomicNumber<Long>) number).compareAndSet(Long.parseLong(expected), Long.parseLong(value)));
            else if (kind.equals("int")) outcome(reply, ((DistributedAtomicNumber<Integer>) number).compareAndSet(Integer.parseInt(expected), Integer.parseInt(value)));
            else outcome(reply, bytes.compareAndSet(utf8(expected), utf8(value)));
        }

        @SuppressWarnings("unchecked")
        void trySet(Json.Obj reply, String value) throws Exception {
            if (kind.equals("long")) outcome(reply, ((DistributedAtomicNumber<Long>) number).trySet(Long.parseLong(value)));
            else if (kind.equals("int")) outcome(reply, ((DistributedAtomicNumber<Integer>) number).trySet(Integer.parseInt(value)));
            else outcome(reply, bytes.trySet(utf8(value)));
        }

        @SuppressWarnings("unchecked")
        void forceSet(String value) throws Exception {
            if (kind.equals("long")) ((DistributedAtomicNumber<Long>) number).forceSet(Long.parseLong(value));
            else if (kind.equals("int")) ((DistributedAtomicNumber<Integer>) number).forceSet(Integer.parseInt(value));
            else bytes.forceSet(utf8(value));
        }

        @SuppressWarnings("unchecked")
        boolean initialize(String value) throws Exception {
            if (kind.equals("long")) return ((DistributedAtomicNumber<Long>) number).initialize(Long.parseLong(value));
            if (kind.equals("int")) return ((DistributedAtomicNumber<Integer>) number).initialize(Integer.parseInt(value));
            return bytes.initialize(utf8(value));
        }

        void outcome(Json.Obj reply, AtomicValue<?> v) {
            reply.with("succeeded", v.succeeded()).with("preValue", text(v.preValue())).with("postValue", text(v.postValue()))
                    .with("optimisticTries", v.getStats().getOptimisticTries())
                    .with("promotedLockTries", v.getStats().getPromotedLockTries());
        }

        private static String text(Object value) {
            if (value == null) return null;
            if (value instanceof byte[]) return new String((byte[]) value, StandardCharsets.UTF_8);
            return String.valueOf(value);
        }

        private static byte[] utf8(String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        }
    }

    private static final class Utf8Serializer implements QueueSerializer<String> {
        @Override
        public byte[] serialize(String item) {
            return item.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String deserialize(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    // ------------------------------------------------------------------ helpers

    private void define(Map<String, Object> a, Object recipe) {
        String name = str(a, "name");
        if (objects.putIfAbsent(name, recipe) != null) {
            throw new IllegalStateException("an object named \"" + name + "\" already exists");
        }
    }

    private <T> T get(Map<String, Object> a, Class<T> type) {
        String name = str(a, "name");
        Object o = objects.get(name);
        if (o == null) throw new IllegalStateException("no object named \"" + name + "\"");
        if (!type.isInstance(o)) {
            throw new IllegalStateException("\"" + name + "\" is a " + o.getClass().getSimpleName() + ", not a " + type.getSimpleName());
        }
        return type.cast(o);
    }

    /** Puts one item, with what the queue's kind takes beside it: a priority, a delay or an id. */
    @SuppressWarnings("unchecked")
    private static void putItem(QueueBase<?> queue, Map<String, Object> a) throws Exception {
        String value = str(a, "value");
        if (queue instanceof DistributedPriorityQueue) {
            ((DistributedPriorityQueue<String>) queue).put(value, (int) num(a, "priority", 0));
        } else if (queue instanceof DistributedDelayQueue) {
            ((DistributedDelayQueue<String>) queue).put(value, num(a, "delayUntilEpochMs", 0));
        } else if (queue instanceof DistributedIdQueue) {
            ((DistributedIdQueue<String>) queue).put(value, str(a, "itemId"));
        } else {
            ((DistributedQueue<String>) queue).put(value);
        }
    }

    private static List<String> participantIds(Collection<Participant> participants) {
        List<String> ids = new ArrayList<>();
        for (Participant p : participants) ids.add(p.getId());
        return ids;
    }

    private static String str(Map<String, Object> a, String key) {
        Object v = a.get(key);
        if (!(v instanceof String)) throw new IllegalArgumentException("\"" + key + "\" must be a string");
        return (String) v;
    }

    private static byte[] bytes(Map<String, Object> a) {
        return Base64.getDecoder().decode(str(a, "base64"));
    }

    private static long num(Map<String, Object> a, String key, long fallback) {
        Object v = a.get(key);
        if (v == null) return fallback;
        if (!(v instanceof Number)) throw new IllegalArgumentException("\"" + key + "\" must be a number");
        return ((Number) v).longValue();
    }

    private static boolean bool(Map<String, Object> a, String key, boolean fallback) {
        Object v = a.get(key);
        if (v == null) return fallback;
        if (!(v instanceof Boolean)) throw new IllegalArgumentException("\"" + key + "\" must be a boolean");
        return (Boolean) v;
    }

    private static String sessionIdHex(CuratorFramework client) {
        try {
            return Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
        } catch (Exception e) {
            return "0";
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder b = new StringBuilder();
        for (byte x : bytes) b.append(String.format("%02x", x & 0xff));
        return b.toString();
    }

    private static String describe(Throwable e) {
        if (e == null) return "";
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    private static Json.Obj event(String type) {
        return new Json.Obj().with("event", type);
    }

    private static void emit(Json.Obj line) {
        String text = line.toString();
        synchronized (OUT) {
            try {
                OUT.write(text);
                OUT.write('\n');
                OUT.flush();
            } catch (Exception e) {
                // stdout closed: the parent is gone, and the lifeline will end us
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    // ------------------------------------------------------------------ JSON

    /** Just enough JSON: flat objects of strings, numbers, booleans and null; string lists on output. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Map<String, Object> parse(String text) {
            Json p = new Json(text);
            Map<String, Object> result = p.object();
            p.space();
            if (p.i != p.s.length()) throw p.error("trailing text");
            return result;
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            space();
            expect('{');
            space();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                space();
                String key = string();
                space();
                expect(':');
                space();
                m.put(key, value());
                space();
                char c = next();
                if (c == '}') return m;
                if (c != ',') throw error("expected ',' or '}'");
            }
        }

        private Object value() {
            char c = peek();
            if (c == '"') return string();
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            throw error("unsupported value (only strings, numbers, booleans and null)");
        }

        private Object number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String text = s.substring(start, i);
            try {
                if (text.contains(".") || text.contains("e") || text.contains("E")) {
                    double d = Double.parseDouble(text);
                    if (d == Math.rint(d) && Math.abs(d) < 9e15) return (long) d;
                    return d;
                }
                return Long.parseLong(text);
            } catch (NumberFormatException e) {
                throw error("bad number " + text);
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') return b.toString();
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    case '/': b.append('/'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) throw error("bad \\u escape");
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException x) {
                            throw error("bad \\u escape");
                        }
                        i += 4;
                        break;
                    default:
                        throw error("bad escape \\" + e);
                }
            }
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }

        private char peek() {
            if (i >= s.length()) throw error("unexpected end");
            return s.charAt(i);
        }

        private char next() {
            char c = peek();
            i++;
            return c;
        }

        private void expect(char c) {
            if (next() != c) throw error("expected '" + c + "'");
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("bad JSON at " + i + ": " + what);
        }

        /** A JSON object under construction; toString() writes it on one line. */
        static final class Obj {
            private final StringBuilder b = new StringBuilder("{");

            Obj with(String key, Object value) {
                if (b.length() > 1) b.append(',');
                quote(b, key);
                b.append(':');
                write(b, value);
                return this;
            }

            @Override
            public String toString() {
                return b + "}";
            }

            private static void write(StringBuilder b, Object v) {
                if (v == null) {
                    b.append("null");
                } else if (v instanceof String) {
                    quote(b, (String) v);
                } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
                    b.append(v);
                } else if (v instanceof Number) {
                    double d = ((Number) v).doubleValue();
                    b.append(Double.isFinite(d) ? Double.toString(d) : "null");
                } else if (v instanceof Collection) {
                    b.append('[');
                    boolean first = true;
                    for (Object x : (Collection<?>) v) {
                        if (!first) b.append(',');
                        first = false;
                        write(b, x);
                    }
                    b.append(']');
                } else {
                    quote(b, v.toString());
                }
            }

            private static void quote(StringBuilder b, String s) {
                b.append('"');
                for (int k = 0; k < s.length(); k++) {
                    char c = s.charAt(k);
                    switch (c) {
                        case '"': b.append("\\\""); break;
                        case '\\': b.append("\\\\"); break;
                        case '\n': b.append("\\n"); break;
                        case '\r': b.append("\\r"); break;
                        case '\t': b.append("\\t"); break;
                        default:
                            if (c < 0x20 || c == 0x2028 || c == 0x2029) b.append(String.format("\\u%04x", (int) c));
                            else b.append(c);
                    }
                }
                b.append('"');
            }
        }
    }
}
