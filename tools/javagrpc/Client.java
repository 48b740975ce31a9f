// A URLFrontier client on Debian's grpc-java (Netty transport) with stubs
// that protoc's Java and grpc-java plugins generate from urlfrontier.proto:
// the kind of client StormCrawler and the reference CLI are. It runs a
// crawler's round trip and the admin calls against a fresh service and
// prints one result per line, "name<TAB>value", for the Go test
// (internal/urlfrontier/javagrpc_test.go) to check. Usage: Client HOST:PORT
// EPOCH_SECONDS (the service's clock, for the refetch dates it sends).

import crawlercommons.urlfrontier.URLFrontierGrpc;
import crawlercommons.urlfrontier.Urlfrontier.*;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ManagedChannelProvider;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

public class Client {
    static final long DEADLINE_SECONDS = 20;

    static URLFrontierGrpc.URLFrontierBlockingStub blocking;
    static URLFrontierGrpc.URLFrontierStub async;

    static void out(String name, Object value) {
        System.out.println(name + "\t" + value);
    }

    static URLFrontierGrpc.URLFrontierBlockingStub b() {
        return blocking.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    static URLInfo info(String url, String key, String crawl) {
        return URLInfo.newBuilder().setUrl(url).setKey(key).setCrawlID(crawl).build();
    }

    static URLItem discovered(String id, URLInfo in) {
        return URLItem.newBuilder().setID(id).setDiscovered(DiscoveredURLItem.newBuilder().setInfo(in)).build();
    }

    static URLItem known(String id, URLInfo in, long refetch) {
        return URLItem.newBuilder()
                .setID(id)
                .setKnown(KnownURLItem.newBuilder().setInfo(in).setRefetchableFromDate(refetch))
                .build();
    }

    /** Sends items on one PutURLs stream and prints "name ID status" per ack. */
    static void put(String name, URLItem... items) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        StreamObserver<URLItem> req =
                async.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS)
                        .putURLs(
                                new StreamObserver<AckMessage>() {
                                    public void onNext(AckMessage a) {
                                        out(name, a.getID() + " " + a.getStatus());
                                    }

                                    public void onError(Throwable t) {
                                        out(name + ".end", io.grpc.Status.fromThrowable(t).getCode());
                                        done.countDown();
                                    }

                                    public void onCompleted() {
                                        out(name + ".end", "OK");
                                        done.countDown();
                                    }
                                });
        for (URLItem it : items) {
            req.onNext(it);
        }
        req.onCompleted();
        if (!done.await(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
            out(name + ".end", "TIMEOUT");
        }
    }

    static void stats(String name) {
        Stats s = b().getStats(QueueWithinCrawlParams.newBuilder().build());
        out(name, s.getCrawlID() + " size=" + s.getSize() + " inProcess=" + s.getInProcess()
                + " queues=" + s.getNumberOfQueues() + " completed=" + s.getCountsOrDefault("completed", -1)
                + " active_queues=" + s.getCountsOrDefault("active_queues", -1));
    }

    static int get(String name, GetParams p) {
        int n = 0;
        for (Iterator<URLInfo> it = b().getURLs(p); it.hasNext(); n++) {
            URLInfo u = it.next();
            StringList src = u.getMetadataOrDefault("src", StringList.getDefaultInstance());
            out(name, u.getUrl() + " " + u.getKey() + " " + u.getCrawlID() + " " + String.join(",", src.getValuesList()));
        }
        return n;
    }

    static String code(Runnable call) {
        try {
            call.run();
            return "OK";
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode().toString();
        }
    }

    public static void main(String[] args) throws Exception {
        long now = java.lang.Long.parseLong(args[1]);
        out("provider", ManagedChannelProvider.provider().getClass().getName());
        ManagedChannel ch = ManagedChannelBuilder.forTarget(args[0]).usePlaintext().build();
        blocking = URLFrontierGrpc.newBlockingStub(ch);
        async = URLFrontierGrpc.newStub(ch);
        try {
            run(now);
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static void run(long now) throws Exception {
        URLInfo one = URLInfo.newBuilder(info("http://java.test/1", "", ""))
                .putMetadata("src", StringList.newBuilder().addValues("java").build())
                .build();
        put("put",
                discovered("d1", one),
                discovered("d2", info("http://java.test/2", "", "")),
                discovered("dup", info("http://java.test/1", "", "")),
                known("", info("http://java.test/done", "", ""), 0),
                discovered("bad", info("", "", "")),
                discovered("c2", info("http://java.test/1", "mykey", "javaCrawl")));
        stats("stats.put");

        // A spout's request: 10 URLs per queue, leased for a minute.
        GetParams spout = GetParams.newBuilder()
                .setMaxUrlsPerQueue(10).setMaxQueues(10).setDelayRequestable(60).setCrawlID("DEFAULT").build();
        out("get.count", get("get", spout));
        stats("stats.leased");
        // A status updater's acknowledgements: fetched, and to refetch in an hour.
        put("ack", known("ack1", info("http://java.test/1", "java.test", "DEFAULT"), 0),
                known("ack2", info("http://java.test/2", "java.test", "DEFAULT"), now + 3600));
        stats("stats.acked");

        QueueList ql = b().listQueues(Pagination.newBuilder().build());
        out("queues", String.join(",", ql.getValuesList()) + " total=" + ql.getTotal() + " size=" + ql.getSize()
                + " crawl=" + ql.getCrawlID());
        ql = b().listQueues(Pagination.newBuilder().setCrawlID("javaCrawl").build());
        out("queues.javaCrawl", String.join(",", ql.getValuesList()));

        List<String> batch = new ArrayList<>();
        CountDownLatch batchDone = new CountDownLatch(1);
        StreamObserver<DiscoveredBatch> disc = async.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS)
                .putDiscovered(new StreamObserver<BatchAck>() {
                    public void onNext(BatchAck a) {
                        List<String> st = new ArrayList<>();
                        a.getStatusesList().forEach(s -> st.add(s.toString()));
                        batch.add(a.getID() + " " + String.join(",", st));
                    }

                    public void onError(Throwable t) {
                        batch.add("error " + io.grpc.Status.fromThrowable(t).getCode());
                        batchDone.countDown();
                    }

                    public void onCompleted() {
                        batchDone.countDown();
                    }
                });
        disc.onNext(DiscoveredBatch.newBuilder().setID("b1")
                .addItems(info("http://java.test/1", "", "")).addItems(info("http://java2.test/", "", "")).build());
        disc.onCompleted();
        batchDone.await(DEADLINE_SECONDS, TimeUnit.SECONDS);
        out("batch", String.join(";", batch));

        URLItem st = b().getURLStatus(URLStatusRequest.newBuilder().setUrl("http://java.test/2").build());
        out("status", st.getKnown().getInfo().getKey() + " refetch=" + st.getKnown().getRefetchableFromDate()
                + " created=" + (st.getCreationDate() > 0));
        out("status.missing", code(() -> b().getURLStatus(URLStatusRequest.newBuilder().setUrl("http://java.test/none").build())));
        out("status.done", b().getURLStatus(URLStatusRequest.newBuilder().setUrl("http://java.test/done").build())
                .getKnown().getRefetchableFromDate());

        CountUrlParams cp = CountUrlParams.newBuilder().setFilter("JAVA").setIgnoreCase(true).build();
        out("count.filter", b().countURLs(cp).getValue() + " hasFilter=" + cp.hasFilter()
                + " hasLocal=" + cp.hasLocal());
        int listed = 0;
        for (Iterator<URLItem> it = b().listURLs(ListUrlParams.newBuilder().build()); it.hasNext(); listed++) {
            if (!it.next().hasKnown()) {
                out("list.notknown", listed);
            }
        }
        out("list.count", listed);

        out("limit.unknown", code(() -> b().setCrawlLimit(CrawlLimitParams.newBuilder().setKey("nope.test").setLimit(1).build())));
        out("delay", code(() -> b().setDelay(QueueDelayParams.newBuilder().setKey("java2.test").setDelayRequestable(5).build())));
        out("block", code(() -> b().blockQueueUntil(BlockQueueParams.newBuilder().setKey("java2.test").setTime(now + 3600).build())));
        out("get.blocked.count", get("get.blocked", GetParams.newBuilder().setKey("java2.test").setCrawlID("").build()));

        out("inactive", code(() -> b().setActive(Active.newBuilder().setState(false).build())));
        out("active.off", b().getActive(Local.getDefaultInstance()).getState());
        out("get.inactive.count", get("get.inactive", GetParams.newBuilder().setAnyCrawlID(AnyCrawlID.getDefaultInstance()).build()));
        b().setActive(Active.newBuilder().setState(true).build());
        out("loglevel", code(() -> b().setLogLevel(LogLevelParams.newBuilder()
                .setPackage("crawlercommons.urlfrontier.service").setLevel(LogLevelParams.Level.DEBUG).build())));

        out("nodes", String.join(",", b().listNodes(Empty.getDefaultInstance()).getValuesList()));
        out("crawls", String.join(",", b().listCrawls(Local.getDefaultInstance()).getValuesList()));
        out("delete.queue", b().deleteQueue(QueueWithinCrawlParams.newBuilder().setKey("java2.test").build()).getValue());
        out("delete.crawl", b().deleteCrawl(DeleteCrawlMessage.newBuilder().setValue("javaCrawl").build()).getValue());
        out("crawls.after", String.join(",", b().listCrawls(Local.getDefaultInstance()).getValuesList()));
    }
}
