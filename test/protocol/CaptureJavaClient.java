package zkrecipes.capture;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;

/**
 * Drives the ZooKeeper Java client through a fixed sequence of requests, one at a time, so that
 * the bytes it sends can be captured as fixtures for the protocol's golden tests (see
 * captureJavaClient.ts, which runs it behind a capturing socket). Prints RECONNECT once its
 * watches are set; the capturing side then cuts the connection, and the client reconnects in the
 * same session (sending its credentials and watches again) before going on.
 *
 * Usage: java -cp <dir>:zookeeper.jar zkrecipes.capture.CaptureJavaClient host:port
 */
public final class CaptureJavaClient {
  private CaptureJavaClient() {}

  private static void expect(BlockingQueue<KeeperState> states, KeeperState wanted) throws InterruptedException {
    for (;;) {
      KeeperState state = states.poll(30, TimeUnit.SECONDS);
      if (state == null) throw new IllegalStateException("no " + wanted + " within 30 s");
      if (state == wanted) return;
    }
  }

  public static void main(String[] args) throws Exception {
    BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
    ZooKeeper zk = new ZooKeeper(args[0], 10_000, event -> {
      if (event.getType() == Watcher.Event.EventType.None) states.add(event.getState());
    });
    expect(states, KeeperState.SyncConnected);
    Watcher ignore = event -> {};
    byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);

    zk.addAuthInfo("digest", "user:secret".getBytes(StandardCharsets.UTF_8));
    zk.create("/golden", hello, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    zk.create("/golden/e-", new byte[0], Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
    zk.create("/golden/ttl", hello, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL, new Stat(), 60_000);
    zk.create("/golden/c", new byte[0], Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);
    zk.create("/golden/s", hello, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, new Stat());
    zk.getData("/golden", ignore, new Stat());
    zk.exists("/golden/missing", ignore);
    zk.getChildren("/golden", ignore, new Stat());
    zk.addWatch("/golden/s", ignore, AddWatchMode.PERSISTENT_RECURSIVE);

    System.out.println("RECONNECT");
    System.out.flush();
    expect(states, KeeperState.Disconnected);
    expect(states, KeeperState.SyncConnected);

    zk.setData("/golden", "world".getBytes(StandardCharsets.UTF_8), 0);
    zk.multi(Arrays.asList(
        Op.check("/golden", 1),
        Op.create("/golden/m", hello, Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
        Op.setData("/golden/m", hello, -1),
        Op.delete("/golden/m", -1)));
    zk.multi(Arrays.asList(Op.getData("/golden"), Op.getChildren("/golden")));
    CountDownLatch synced = new CountDownLatch(1);
    zk.sync("/golden", (rc, path, ctx) -> synced.countDown(), null);
    synced.await(30, TimeUnit.SECONDS);
    zk.getACL("/golden", new Stat());
    zk.setACL("/golden/s", Collections.singletonList(new ACL(Perms.ALL, new Id("digest", "user:Ia2QuK8bY0ErWSYaXGDSjhAbo+U="))), -1);
    zk.getEphemerals("/");
    zk.getAllChildrenNumber("/golden");
    zk.whoAmI();
    zk.removeWatches("/golden/missing", ignore, Watcher.WatcherType.Data, false);
    zk.removeAllWatches("/golden/s", Watcher.WatcherType.Any, false);
    zk.delete("/golden/s", -1);
    zk.close();
    System.out.println("DONE");
  }
}
