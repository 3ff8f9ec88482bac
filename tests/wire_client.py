"""A client written only from proto/*.proto, in Python, against a real cluster.

tests/wire_python_test.sh generates the Python stubs with Debian's protoc and
grpc_python_plugin, starts two shard_server processes and a
coordinator_server with a token file, and runs this with the stubs' directory
on sys.path. It checks what a fetcher, a ping source and an operator written
in another language meet on the wire: role tokens in the `authorization`
metadata, per-item statuses naming the field, normalised URLs, signals acked
by sequence, leases and reports by cluster lease id, the standard health
service. Exits non-zero on the first failed check.

Usage: wire_client.py COORDINATOR_ADDRESS TOKEN_FILE
"""

import sys
import time

import grpc

from proto import common_pb2
from proto import coordinator_pb2
from proto import coordinator_pb2_grpc
from proto import health_pb2
from proto import health_pb2_grpc
from proto import shard_pb2

URLS = [
    "HTTP://Site1.Example/a#fragment",
    "http://site2.example:80/b",
    "https://site3.example/c?q=1",
    "http://site4.example/d",
]
NORMALISED = [
    "http://site1.example/a",
    "http://site2.example/b",
    "https://site3.example/c?q=1",
    "http://site4.example/d",
]


def check(condition, what, detail=""):
    """Prints `what` when `condition` holds; raises with `detail` when not."""
    if not condition:
        raise AssertionError("%s: %s" % (what, detail) if detail else what)
    print("ok:", what)


def tokens_by_role(path):
    tokens = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                role, token = line.split()
                tokens.setdefault(role, token)
    return tokens


def metadata(token):
    return (("authorization", "Bearer " + token),)


def expect_error(call, code, what):
    try:
        call()
    except grpc.RpcError as e:
        check(e.code() == code, "%s: %s (got %s: %s)" % (what, code.name, e.code().name, e.details()))
        return
    raise AssertionError("%s: the call succeeded, expected %s" % (what, code.name))


def main():
    address, token_file = sys.argv[1], sys.argv[2]
    tokens = tokens_by_role(token_file)
    operator, fetcher, pinger = (metadata(tokens[r]) for r in ("operator", "fetcher", "pinger"))
    channel = grpc.insecure_channel(address)
    grpc.channel_ready_future(channel).result(timeout=30)
    coordinator = coordinator_pb2_grpc.CoordinatorServiceStub(channel)

    # Health, the standard protocol.
    health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    check(health.status == health_pb2.HealthCheckResponse.SERVING, "health: SERVING")

    # Tokens: none, and a role that may not call the RPC.
    expect_error(lambda: coordinator.GetShardMap(coordinator_pb2.GetShardMapRequest(), timeout=10),
                 grpc.StatusCode.UNAUTHENTICATED, "GetShardMap without a token")
    expect_error(
        lambda: coordinator.SetBandwidth(coordinator_pb2.SetBandwidthRequest(bandwidth=5),
                                         metadata=fetcher, timeout=10),
        grpc.StatusCode.PERMISSION_DENIED, "SetBandwidth with a fetcher's token")
    shard_map = coordinator.GetShardMap(coordinator_pb2.GetShardMapRequest(), metadata=pinger,
                                        timeout=10)
    check(shard_map.num_shards == 2 and list(shard_map.live) == [True, True],
          "GetShardMap: 2 live shards")
    check(shard_map.hash == "psl-site-fnv1a64-murmur-jump", "GetShardMap names its hash")

    # An operator loads URLs; the bad items are refused by index, naming the field.
    an_hour_ago = time.time() - 3600
    specs = [shard_pb2.UrlSpec(url=u, importance=1.0 + i, last_crawl_time=an_hour_ago,
                               prior=common_pb2.ChangeModel(change_rate=0.01, recall=0.5,
                                                            false_rate=0.001))
             for i, u in enumerate(URLS)]
    specs.append(shard_pb2.UrlSpec(url="ftp://site5.example/e", importance=1.0))
    specs.append(shard_pb2.UrlSpec(url="http://site6.example/f", importance=-1.0))
    upserted = coordinator.UpsertUrls(shard_pb2.UpsertUrlsRequest(urls=specs, sync=True),
                                      metadata=operator, timeout=30)
    check(upserted.result.applied == 4 and upserted.created == 4, "UpsertUrls: 4 applied, 4 new")
    rejected = {r.index: r for r in upserted.result.rejected}
    check(sorted(rejected) == [4, 5], "UpsertUrls: items 4 and 5 rejected by index")
    check(rejected[4].code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
          and rejected[4].message.startswith("url"),
          "UpsertUrls: a bad scheme is INVALID_ARGUMENT naming url (%r)" % rejected[4].message)
    check(rejected[5].code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
          and rejected[5].message.startswith("importance"),
          "UpsertUrls: a negative importance names importance (%r)" % rejected[5].message)

    def url_state(url):
        return coordinator.GetUrlState(shard_pb2.GetUrlStateRequest(url=url), metadata=operator,
                                       timeout=10)

    state = url_state(URLS[0])
    check(state.url == NORMALISED[0], "GetUrlState answers with the normalised URL")
    check(abs(state.prior.change_rate - 0.01) < 1e-12 and state.importance == 1.0
          and abs(state.last_crawl_time - an_hour_ago) < 1e-3,
          "GetUrlState: the prior, importance and last crawl time given")
    expect_error(lambda: url_state("http://unknown.example/x"), grpc.StatusCode.NOT_FOUND,
                 "GetUrlState of an unknown URL")
    expect_error(lambda: url_state("not a url"), grpc.StatusCode.INVALID_ARGUMENT,
                 "GetUrlState of a malformed URL")

    # A ping source streams a batch; the ack echoes its sequence, the bad item is refused.
    now = time.time()
    batch = shard_pb2.SignalBatch(sequence=41, sync=True, signals=[
        shard_pb2.Signal(url=URLS[0], time=now - 1, source=common_pb2.SIGNAL_SOURCE_INDEXNOW),
        shard_pb2.Signal(url=URLS[0], time=now - 1, source=common_pb2.SIGNAL_SOURCE_INDEXNOW),
        shard_pb2.Signal(url=URLS[1], time=now + 86400, source=common_pb2.SIGNAL_SOURCE_CDN),
        shard_pb2.Signal(url="http://unknown.example/x", time=now - 1),
    ])
    acks = list(coordinator.StreamSignals(iter([batch]), metadata=pinger, timeout=30))
    check(len(acks) == 1 and acks[0].sequence == 41, "StreamSignals: one ack, sequence 41")
    ack = acks[0]
    check(ack.counted == 1 and ack.duplicate == 1, "StreamSignals: counted once, a duplicate",
          str(ack))
    check([r.index for r in ack.result.rejected] == [2]
          and ack.result.rejected[0].code == grpc.StatusCode.OUT_OF_RANGE.value[0],
          "StreamSignals: a signal a day ahead is OUT_OF_RANGE by index")
    check(ack.unknown == 1 and list(ack.unknown_indexes) == [3], "StreamSignals: unknown URL listed")
    check(url_state(URLS[0]).signals_since_crawl == 1, "GetUrlState: one signal since the crawl")

    # An operator sets the bandwidth; a fetcher leases every URL and reports.
    bandwidth = coordinator.SetBandwidth(coordinator_pb2.SetBandwidthRequest(bandwidth=20),
                                         metadata=operator, timeout=10)
    check(bandwidth.bandwidth == 20, "SetBandwidth: R = 20")
    leases = {}
    deadline = time.time() + 30
    while len(leases) < len(URLS) and time.time() < deadline:
        reply = coordinator.Lease(coordinator_pb2.FetchLeaseRequest(max_urls=10, lookahead=0.5,
                                                                    holder="python-fetcher"),
                                  metadata=fetcher, timeout=10)
        for lease in reply.leases:
            leases[lease.url] = lease
        if not reply.leases:
            time.sleep(0.05)
    check(sorted(leases) == sorted(NORMALISED), "Lease: every URL, normalised, within 30 s")
    check(all(l.lease_id >> 56 == l.shard_index for l in leases.values()),
          "Lease: the lease id's top 8 bits are its shard")
    state = url_state(URLS[0])
    check(state.lease.holder == "python-fetcher"
          and state.lease.lease_id == leases[NORMALISED[0]].lease_id,
          "GetUrlState shows the cluster lease and its holder")

    # A fetch that takes longer renews its lease; one given back is leased again, here
    # through the server-streaming StreamLeases.
    renewed_id = leases[NORMALISED[1]].lease_id
    renewed = coordinator.RenewLeases(
        coordinator_pb2.FetchRenewRequest(lease_ids=[renewed_id], lease_duration=600),
        metadata=fetcher, timeout=10)
    check(renewed.result.applied == 1 and renewed.deadlines[0] > time.time() + 500,
          "RenewLeases: the deadline moves 600 s on")
    released_url = NORMALISED[2]
    released = coordinator.ReleaseLeases(
        coordinator_pb2.FetchReleaseRequest(lease_ids=[leases[released_url].lease_id]),
        metadata=fetcher, timeout=10)
    check(released.result.applied == 1 and released.released == 1, "ReleaseLeases: one released")
    stream = coordinator.StreamLeases(coordinator_pb2.StreamLeasesRequest(holder="python-stream"),
                                      metadata=fetcher, timeout=30)
    again = next(stream)
    stream.cancel()
    check(again.url == released_url and again.lease_id != leases[released_url].lease_id,
          "StreamLeases: the released URL is leased again, under a new id")
    leases[released_url] = again

    reports = [shard_pb2.CrawlReport(lease_id=l.lease_id, fetch_time=time.time(),
                                     outcome=common_pb2.CRAWL_OUTCOME_CHANGED)
               for l in leases.values()]
    stranger = 1 << 56 | 987654321  # shard 1, a lease it never granted
    reports.append(shard_pb2.CrawlReport(lease_id=stranger, fetch_time=time.time(),
                                         outcome=common_pb2.CRAWL_OUTCOME_CHANGED))
    reported = coordinator.ReportCrawls(shard_pb2.ReportCrawlsRequest(reports=reports, sync=True),
                                        metadata=fetcher, timeout=30)
    check(reported.result.applied == 4 and reported.changed == 4, "ReportCrawls: 4 applied, changed")
    check([(r.index, r.code) for r in reported.result.rejected]
          == [(4, grpc.StatusCode.NOT_FOUND.value[0])],
          "ReportCrawls: an unknown lease id is NOT_FOUND by index")
    state = url_state(URLS[0])
    check(state.signals_since_crawl == 0 and not state.HasField("lease")
          and len(state.recent_outcomes) == 1
          and state.recent_outcomes[0].outcome == common_pb2.CRAWL_OUTCOME_CHANGED
          and state.recent_outcomes[0].signals == 1,
          "GetUrlState after the report: the outcome with its signal, no lease")

    stats = coordinator.GetClusterStats(coordinator_pb2.GetClusterStatsRequest(),
                                        metadata=operator, timeout=10)
    check(stats.total.urls == 4 and stats.live_shards == 2, "GetClusterStats: 4 URLs on 2 shards")
    print("PASS")


if __name__ == "__main__":
    main()
