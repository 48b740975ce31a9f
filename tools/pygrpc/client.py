"""An independent URLFrontier client: Python's grpcio and protobuf runtime
from Debian (python3-grpcio, python3-protobuf), with message classes that
Debian's protoc generates from urlfrontier.proto at test time, and every RPC
called through grpcio's generic API (no grpc_tools, no generated stubs).

It drives every RPC of a fresh service, plus the gRPC health service and
server reflection (health.proto and reflection.proto in this directory), and
prints one JSON object of what it saw. The Go test
(internal/urlfrontier/pygrpc_test.go) generates the classes, runs it with
/usr/bin/python3 and checks the answers.

Usage: /usr/bin/python3 client.py HOST:PORT GENERATED_DIR
"""

import json
import queue
import sys
import time

if len(sys.argv) != 3:
    sys.exit("usage: client.py HOST:PORT GENERATED_DIR")
ADDR, GEN = sys.argv[1], sys.argv[2]
sys.path.insert(0, GEN)

import grpc  # noqa: E402
from google.protobuf import descriptor_pb2  # noqa: E402

import health_pb2 as hpb  # noqa: E402
import reflection_pb2 as rpb  # noqa: E402
import urlfrontier_pb2 as pb  # noqa: E402

TIMEOUT = 20
channel = grpc.insecure_channel(ADDR)
grpc.channel_ready_future(channel).result(timeout=TIMEOUT)

# The streaming shape of each RPC, from the service descriptor protoc built
# (so a shape this table got wrong fails here, not on the wire).
SERVICE = pb.DESCRIPTOR.services_by_name["URLFrontier"]
SHAPES = {
    "ListNodes": "unary", "ListCrawls": "unary", "DeleteCrawl": "unary",
    "ListQueues": "unary", "GetURLs": "server", "PutURLs": "bidi",
    "PutDiscovered": "bidi", "GetStats": "unary", "DeleteQueue": "unary",
    "BlockQueueUntil": "unary", "SetActive": "unary", "GetActive": "unary",
    "SetDelay": "unary", "SetLogLevel": "unary", "SetCrawlLimit": "unary",
    "GetURLStatus": "unary", "ListURLs": "server", "CountURLs": "unary",
    "PurgeURLs": "unary",
}
_protoc_shapes = {}
for m in SERVICE.methods:
    dp = descriptor_pb2.MethodDescriptorProto()
    m.CopyToProto(dp)
    _protoc_shapes[m.name] = {(False, False): "unary", (False, True): "server",
                              (True, True): "bidi", (True, False): "client"}[
        (dp.client_streaming, dp.server_streaming)]
assert _protoc_shapes == SHAPES, _protoc_shapes

CALLS = {}
for m in SERVICE.methods:
    path = "/%s/%s" % (SERVICE.full_name, m.name)
    req = getattr(pb, m.input_type.name)
    res = getattr(pb, m.output_type.name)
    make = {"unary": channel.unary_unary, "server": channel.unary_stream,
            "bidi": channel.stream_stream}[SHAPES[m.name]]
    CALLS[m.name] = make(path, request_serializer=req.SerializeToString,
                         response_deserializer=res.FromString)


def err(e):
    return {"code": e.code().name, "details": e.details()}


def unary(name, req):
    """The answer, or {"code", "details"} of the gRPC error."""
    try:
        return CALLS[name](req, timeout=TIMEOUT)
    except grpc.RpcError as e:
        return err(e)


def stream(name, req):
    """Every message of a server stream, then its status code."""
    out = []
    try:
        for m in CALLS[name](req, timeout=TIMEOUT):
            out.append(m)
    except grpc.RpcError as e:
        return {"items": out, **err(e)}
    return {"items": out, "code": "OK"}


def bidi(name, reqs):
    out = []
    try:
        for m in CALLS[name](iter(reqs), timeout=TIMEOUT):
            out.append(m)
    except grpc.RpcError as e:
        return {"items": out, **err(e)}
    return {"items": out, "code": "OK"}


def code(r):
    """A unary answer's status: "OK" or the error code."""
    return r["code"] if isinstance(r, dict) else "OK"


def info(url, **kw):
    md = kw.pop("metadata", {})
    i = pb.URLInfo(url=url, **kw)
    for k, vs in md.items():
        i.metadata[k].values.extend(vs)
    return i


def disc(id_, url, **kw):
    return pb.URLItem(ID=id_, discovered=pb.DiscoveredURLItem(info=info(url, **kw)))


def known(id_, url, refetch, **kw):
    return pb.URLItem(ID=id_, known=pb.KnownURLItem(info=info(url, **kw), refetchable_from_date=refetch))


def acks(r):
    return {"code": r["code"], "acks": [[a.ID, pb.AckMessage.Status.Name(a.status)] for a in r["items"]]}


def urls(r):
    return {"code": r["code"], "urls": [[u.url, u.key, u.crawlID] for u in r["items"]],
            "metadata": {u.url: {m: list(v.values) for m, v in u.metadata.items()} for u in r["items"] if u.metadata}}


def stats(s):
    if isinstance(s, dict):
        return s
    return {"size": s.size, "inProcess": s.inProcess, "numberOfQueues": s.numberOfQueues,
            "crawlID": s.crawlID, "counts": dict(s.counts)}


def queues(q):
    if isinstance(q, dict):
        return q
    return {"values": list(q.values), "total": q.total, "start": q.start, "size": q.size, "crawlID": q.crawlID}


def item(it):
    """A URLItem as the client sees it, oneof and presence included."""
    which = it.WhichOneof("item")
    d = {"which": which, "ID": it.ID, "creation_date": it.creation_date}
    if which == "known":
        k = it.known
        d.update(url=k.info.url, key=k.info.key, crawlID=k.info.crawlID,
                 metadata={m: list(v.values) for m, v in k.info.metadata.items()},
                 refetchable_from_date=k.refetchable_from_date, has_info=k.HasField("info"))
    return d


now = int(time.time())
r = {}

# PutURLs, all items sent then the acks read: discovered, known (completed
# and due later), invalid items in the middle (acked SKIPPED, the stream
# goes on), a duplicate, an empty ID (acked with the URL), crawl IDs "",
# "DEFAULT", blank and another crawl.
r["put"] = acks(bidi("PutURLs", [
    disc("d1", "http://py.test/1", metadata={"src": ["python", "grpcio"]}),
    disc("d2", "http://py.test/2"),
    disc("bad", "not a url"),
    pb.URLItem(ID="neither"),
    disc("nohost", "http:///path"),
    disc("d3", "http://py.test/3"),
    disc("d4", "http://py.test/4"),
    known("k1", "http://py.test/done", 0),
    known("k2", "http://py.test/later", now + 3600),
    disc("", "http://py2.test/a"),
    disc("dflt", "http://py2.test/b", crawlID="DEFAULT", metadata={"m": ["1"]}),
    disc("p4", "http://py4.test/a"),
    disc("c1", "http://other.test/1", crawlID="pyCrawl", key="mykey"),
    disc("c2", "http://other.test/2", crawlID="pyCrawl", key="mykey"),
    disc("blank", "http://py2.test/c", crawlID="  "),
    disc("last", "http://py.test/1"),  # a duplicate of d1
]))

# PutURLs the way a crawler talks: one item, wait for its ack, the next
# (the service must ack before the client half-closes).
q = queue.Queue()


def gen():
    while True:
        m = q.get()
        if m is None:
            return
        yield m


interleaved = {"acks": []}
try:
    it = CALLS["PutURLs"](gen(), timeout=TIMEOUT)
    for i, u in enumerate(["http://py3.test/x", "http://py3.test/x", "http://py6.test/"]):
        q.put(disc("i%d" % i, u))
        a = next(it)
        interleaved["acks"].append([a.ID, pb.AckMessage.Status.Name(a.status)])
    q.put(None)
    interleaved["rest"] = len(list(it))
    interleaved["code"] = "OK"
except grpc.RpcError as e:
    q.put(None)
    interleaved.update(err(e))
r["putInterleaved"] = interleaved

pd = bidi("PutDiscovered", [
    pb.DiscoveredBatch(ID="b1", items=[info("http://py.test/1"), info("http://py7.test/1")]),
    pb.DiscoveredBatch(ID="b2", items=[info(""), info("http://py7.test/2"), info("http://py7.test/1")]),
    pb.DiscoveredBatch(ID="empty"),
])
r["putDiscovered"] = {"code": pd["code"], "acks": {b.ID: [pb.AckMessage.Status.Name(s) for s in b.statuses] for b in pd["items"]}}
# Streams closed without an item.
r["putNothing"] = acks(bidi("PutURLs", []))
r["putDiscoveredNothing"] = bidi("PutDiscovered", [])["code"]

st = unary("GetURLStatus", pb.URLStatusRequest(url="http://py.test/1", key="py.test", crawlID="DEFAULT"))
r["statusMeta"] = item(st) if code(st) == "OK" else st

nodes = unary("ListNodes", pb.Empty())
r["nodes"] = list(nodes.values) if code(nodes) == "OK" else nodes
crawls = unary("ListCrawls", pb.Local())
r["crawls"] = list(crawls.values) if code(crawls) == "OK" else crawls

# ListQueues: paging and total, "" meaning DEFAULT.
r["queuesPage1"] = queues(unary("ListQueues", pb.Pagination(size=3)))
r["queuesPage2"] = queues(unary("ListQueues", pb.Pagination(start=3, size=3, crawlID="DEFAULT")))
r["queuesPast"] = queues(unary("ListQueues", pb.Pagination(start=50, size=3)))
r["queuesOther"] = queues(unary("ListQueues", pb.Pagination(crawlID="pyCrawl")))

r["statsCrawl"] = stats(unary("GetStats", pb.QueueWithinCrawlParams()))
r["statsCrawlDefault"] = stats(unary("GetStats", pb.QueueWithinCrawlParams(crawlID="DEFAULT")))
r["statsQueue"] = stats(unary("GetStats", pb.QueueWithinCrawlParams(key="py.test")))
r["statsBlankCrawl"] = stats(unary("GetStats", pb.QueueWithinCrawlParams(key="py2.test", crawlID=" ")))
# A field this .proto does not know (number 111, varint 1) is ignored.
stats_unknown = channel.unary_unary("/urlfrontier.URLFrontier/GetStats",
                                    request_serializer=lambda m: m.SerializeToString() + b"\xf8\x06\x01",
                                    response_deserializer=pb.Stats.FromString)
try:
    r["statsUnknownField"] = stats(stats_unknown(pb.QueueWithinCrawlParams(key="py.test"), timeout=TIMEOUT))
except grpc.RpcError as e:
    r["statsUnknownField"] = err(e)

# GetURLs with a key and the crawlID case of the oneof: 2 of py.test's 4
# due URLs; again: none (2 in flight); a key without the crawlID case: none.
g = pb.GetParams(key="py.test", crawlID="DEFAULT", max_urls_per_queue=2, delay_requestable=60)
r["getKey"] = urls(stream("GetURLs", g))
r["getKeyOneof"] = g.WhichOneof("item")
r["statsLeased"] = stats(unary("GetStats", pb.QueueWithinCrawlParams(key="py.test", crawlID="")))
r["getKeyAgain"] = urls(stream("GetURLs", pb.GetParams(key="py.test", crawlID="", max_urls_per_queue=2)))
nocrawl = pb.GetParams(key="py.test")
r["getKeyNoCrawl"] = urls(stream("GetURLs", nocrawl))
r["getKeyNoCrawlOneof"] = nocrawl.WhichOneof("item")

# A lease of 2 s (delay_requestable) expires: the URL is served again
# (2 s, not 1: a loaded machine must not let it lapse between two calls).
r["setDelayPy3"] = code(unary("SetDelay", pb.QueueDelayParams(key="py3.test", delay_requestable=0)))
short = pb.GetParams(key="py3.test", crawlID="", delay_requestable=2)
r["leaseShort"] = urls(stream("GetURLs", short))
r["leaseHeld"] = urls(stream("GetURLs", short))
time.sleep(2.6)
r["leaseExpired"] = urls(stream("GetURLs", pb.GetParams(key="py3.test", crawlID="", delay_requestable=60)))

# max_queues: queues with due URLs left are py2, py4, py6, py7 and pyCrawl's
# mykey (py.test and py3.test are at their in-flight bound of 1).
r["getAny"] = urls(stream("GetURLs", pb.GetParams(anyCrawlID=pb.AnyCrawlID(), max_queues=3, max_urls_per_queue=1, delay_requestable=60)))

# Acknowledge the first URL leased from py.test as completed.
if r["getKey"]["urls"]:
    done = r["getKey"]["urls"][0][0]
    r["ackDone"] = done
    r["ack"] = acks(bidi("PutURLs", [known("ack", done, 0)]))
    r["statsAcked"] = stats(unary("GetStats", pb.QueueWithinCrawlParams(key="py.test")))

# GetURLStatus: found (put with crawl "DEFAULT", asked with ""), completed,
# NOT_FOUND for an unknown URL and for a known URL under another key,
# INVALID_ARGUMENT without a URL.
st = unary("GetURLStatus", pb.URLStatusRequest(url="http://py2.test/b"))
r["status"] = item(st) if code(st) == "OK" else st
st = unary("GetURLStatus", pb.URLStatusRequest(url="http://py.test/1", crawlID=" "))
r["statusAcked"] = item(st) if code(st) == "OK" else st
st = unary("GetURLStatus", pb.URLStatusRequest(url="http://py.test/done"))
r["statusDone"] = item(st) if code(st) == "OK" else st
r["statusMissing"] = unary("GetURLStatus", pb.URLStatusRequest(url="http://py.test/missing"))
r["statusOtherKey"] = unary("GetURLStatus", pb.URLStatusRequest(url="http://py.test/2", key="elsewhere"))
r["statusNoURL"] = unary("GetURLStatus", pb.URLStatusRequest())

# proto3 optional: presence as Python sees it, and as the service reads it.
p = pb.ListUrlParams()
presence = {"unset": [p.HasField("filter"), p.HasField("ignoreCase")]}
p.filter = ""
p.ignoreCase = False
presence["setEmpty"] = [p.HasField("filter"), p.HasField("ignoreCase"), len(p.SerializeToString())]
p.ClearField("filter")
presence["cleared"] = [p.HasField("filter"), len(p.SerializeToString())]
c = pb.CountUrlParams(local=False)
presence["countLocal"] = [c.HasField("local"), c.HasField("filter")]
try:
    pb.GetParams().HasField("max_queues")
    presence["nonOptional"] = "no error"
except ValueError:
    presence["nonOptional"] = "ValueError"
r["presence"] = presence

# ListURLs and CountURLs: substring filter, ignoreCase, paging.
r["listFilter"] = [i["url"] for i in map(item, stream("ListURLs", pb.ListUrlParams(filter="PY.TEST/", ignoreCase=True))["items"])]
r["listFilterCase"] = len(stream("ListURLs", pb.ListUrlParams(filter="PY.TEST/"))["items"])
r["listFilterCaseFalse"] = len(stream("ListURLs", pb.ListUrlParams(filter="PY.TEST/", ignoreCase=False))["items"])
r["listEmptyFilter"] = len(stream("ListURLs", pb.ListUrlParams(filter="", size=1000))["items"])
r["listAll"] = len(stream("ListURLs", pb.ListUrlParams(size=1000))["items"])
pages = []
for start in (0, 2, 4, 6):
    pages.append([i["url"] for i in map(item, stream("ListURLs", pb.ListUrlParams(key="py.test", start=start, size=2))["items"])])
r["listPages"] = pages
r["listItems"] = [item(i) for i in stream("ListURLs", pb.ListUrlParams(key="mykey", crawlID="pyCrawl"))["items"]]
r["countFilter"] = unary("CountURLs", pb.CountUrlParams(filter="PY.TEST/", ignoreCase=True)).value
r["countFilterCase"] = unary("CountURLs", pb.CountUrlParams(filter="PY.TEST/")).value
r["countKey"] = unary("CountURLs", pb.CountUrlParams(key="py.test", crawlID="DEFAULT")).value
r["countOther"] = unary("CountURLs", pb.CountUrlParams(crawlID="pyCrawl", local=True)).value

# SetDelay: with 3600 s py5.test serves one URL and then nothing; with 0
# it serves the next at once.
r["put5"] = acks(bidi("PutURLs", [disc("d5a", "http://py5.test/a"), disc("d5b", "http://py5.test/b")]))
r["setDelayLong"] = code(unary("SetDelay", pb.QueueDelayParams(key="py5.test", delay_requestable=3600)))
g5 = pb.GetParams(key="py5.test", crawlID="", max_urls_per_queue=2, delay_requestable=60)
r["delay5First"] = urls(stream("GetURLs", pb.GetParams(key="py5.test", crawlID="", max_urls_per_queue=1, delay_requestable=60)))
r["delay5Held"] = urls(stream("GetURLs", g5))
r["setDelayZero"] = code(unary("SetDelay", pb.QueueDelayParams(key="py5.test", delay_requestable=0)))
r["delay5Next"] = urls(stream("GetURLs", g5))
r["setDelayDefault"] = code(unary("SetDelay", pb.QueueDelayParams(delay_requestable=1)))
r["setDelayUnknownQueue"] = code(unary("SetDelay", pb.QueueDelayParams(key="not-yet.test", delay_requestable=5)))

# BlockQueueUntil: a blocked queue leaves ListQueues (unless inactive ones
# are asked) and GetURLs; 0 unblocks.
r["setDelayMykey"] = code(unary("SetDelay", pb.QueueDelayParams(key="mykey", crawlID="pyCrawl", delay_requestable=0)))
r["block"] = code(unary("BlockQueueUntil", pb.BlockQueueParams(key="mykey", crawlID="pyCrawl", time=now + 3600)))
r["blockedQueues"] = queues(unary("ListQueues", pb.Pagination(crawlID="pyCrawl")))
r["blockedQueuesInactive"] = queues(unary("ListQueues", pb.Pagination(crawlID="pyCrawl", include_inactive=True)))
r["getBlocked"] = urls(stream("GetURLs", pb.GetParams(crawlID="pyCrawl", delay_requestable=60)))
r["unblock"] = code(unary("BlockQueueUntil", pb.BlockQueueParams(key="mykey", crawlID="pyCrawl", time=0)))
r["unblockedQueues"] = queues(unary("ListQueues", pb.Pagination(crawlID="pyCrawl")))
r["getUnblocked"] = urls(stream("GetURLs", pb.GetParams(crawlID="pyCrawl", delay_requestable=60)))
r["blockNoKey"] = code(unary("BlockQueueUntil", pb.BlockQueueParams(time=now)))

# SetCrawlLimit: a known queue, an unknown one (NOT_FOUND), no key.
r["limit"] = code(unary("SetCrawlLimit", pb.CrawlLimitParams(key="py4.test", limit=3)))
r["limitUnknown"] = unary("SetCrawlLimit", pb.CrawlLimitParams(key="nope", limit=3))
r["limitNoKey"] = code(unary("SetCrawlLimit", pb.CrawlLimitParams(limit=3)))

# SetActive/GetActive: inactive serves nothing, puts still work.
r["setInactive"] = code(unary("SetActive", pb.Active(state=False)))
r["activeOff"] = unary("GetActive", pb.Local()).state
r["getInactive"] = urls(stream("GetURLs", pb.GetParams(anyCrawlID=pb.AnyCrawlID())))
r["putInactive"] = acks(bidi("PutURLs", [disc("off", "http://py8.test/")]))
r["setActive"] = code(unary("SetActive", pb.Active(state=True, local=True)))
r["activeOn"] = unary("GetActive", pb.Local(local=True)).state

# SetLogLevel: a Java package name, every level; an unknown level.
r["logLevels"] = [code(unary("SetLogLevel", pb.LogLevelParams(package="crawlercommons.urlfrontier.service", level=lv)))
                  for lv in pb.LogLevelParams.Level.values()]
r["logLevelRoot"] = code(unary("SetLogLevel", pb.LogLevelParams(package="ROOT", level=pb.LogLevelParams.INFO)))
r["logLevelUnknown"] = code(unary("SetLogLevel", pb.LogLevelParams(package="x", level=99)))

# PurgeURLs: 1 day (nothing that old), 0 days (every URL so far).
r["purgeNothing"] = unary("PurgeURLs", pb.PurgeUrlParams(key="nothing.test", days=1)).value
r["purgeDay"] = unary("PurgeURLs", pb.PurgeUrlParams(days=1)).value
r["purgeQueue"] = unary("PurgeURLs", pb.PurgeUrlParams(key="py7.test", days=0)).value
r["countPurged"] = unary("CountURLs", pb.CountUrlParams(key="py7.test")).value

# DeleteQueue and DeleteCrawl return the URLs not completed they removed.
r["deleteQueue"] = unary("DeleteQueue", pb.QueueWithinCrawlParams(key="py.test", crawlID="DEFAULT")).value
r["deleteQueueUnknown"] = unary("DeleteQueue", pb.QueueWithinCrawlParams(key="nope")).value
r["deleteQueueNoKey"] = code(unary("DeleteQueue", pb.QueueWithinCrawlParams()))
r["statsDeleted"] = stats(unary("GetStats", pb.QueueWithinCrawlParams(key="py.test")))
r["deleteCrawl"] = unary("DeleteCrawl", pb.DeleteCrawlMessage(value="pyCrawl")).value
r["crawlsAfter"] = list(unary("ListCrawls", pb.Local()).values)

# The health service.
check = channel.unary_unary("/grpc.health.v1.Health/Check",
                            request_serializer=hpb.HealthCheckRequest.SerializeToString,
                            response_deserializer=hpb.HealthCheckResponse.FromString)
health = {}
for svc in ["", "urlfrontier.URLFrontier", "no.such.Service"]:
    try:
        health[svc] = hpb.HealthCheckResponse.ServingStatus.Name(check(hpb.HealthCheckRequest(service=svc), timeout=TIMEOUT).status)
    except grpc.RpcError as e:
        health[svc] = e.code().name
watch = channel.unary_stream("/grpc.health.v1.Health/Watch",
                              request_serializer=hpb.HealthCheckRequest.SerializeToString,
                              response_deserializer=hpb.HealthCheckResponse.FromString)
w = watch(hpb.HealthCheckRequest(service="urlfrontier.URLFrontier"), timeout=TIMEOUT)
try:
    health["watch"] = hpb.HealthCheckResponse.ServingStatus.Name(next(w).status)
except grpc.RpcError as e:
    health["watch"] = e.code().name
w.cancel()
r["health"] = health

# Server reflection: the services, and the service's file descriptor
# compared with the one Debian's protoc made from the .proto.
refl = channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                             request_serializer=rpb.ServerReflectionRequest.SerializeToString,
                             response_deserializer=rpb.ServerReflectionResponse.FromString)
reflection = {}
try:
    resps = list(refl(iter([rpb.ServerReflectionRequest(list_services=""),
                            rpb.ServerReflectionRequest(file_containing_symbol="urlfrontier.URLFrontier")]),
                      timeout=TIMEOUT))
    reflection["services"] = sorted(s.name for s in resps[0].list_services_response.service)
    fds = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in resps[1].file_descriptor_response.file_descriptor_proto]
    mine = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(mine)
    theirs = [f for f in fds if f.package == "urlfrontier"]
    reflection["files"] = [f.name for f in fds]
    if theirs:
        t = theirs[0]
        reflection["methods"] = [[m.name, m.input_type, m.output_type, m.client_streaming, m.server_streaming]
                                 for m in t.service[0].method]
        # protoc fills in json_name for the Go generator, not in the
        # descriptor it embeds for Python: compare it with the JSON name
        # Python's runtime derives, then the files without it.
        bad = []
        for m in t.message_type:
            for f in m.field:
                want = pb.DESCRIPTOR.message_types_by_name[m.name].fields_by_name[f.name].json_name
                if f.json_name != want:
                    bad.append([m.name, f.name, f.json_name, want])
                f.ClearField("json_name")
            for n in m.nested_type:
                for f in n.field:
                    f.ClearField("json_name")
        reflection["jsonNameMismatches"] = bad
        reflection["sameService"] = t.service == mine.service
        reflection["sameFile"] = t == mine
    reflection["code"] = "OK"
except grpc.RpcError as e:
    reflection.update(err(e))
r["reflection"] = reflection

channel.close()
print(json.dumps(r))
