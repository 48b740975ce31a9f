// An independent URLFrontier client: @grpc/grpc-js with the .proto loaded
// at run time by @grpc/proto-loader (no generated code), driving every RPC
// of a service and printing one JSON object of what it saw. The Go test
// (internal/urlfrontier/grpcjs_test.go) checks the answers.
//
// Usage: node client.mjs HOST:PORT PATH/TO/urlfrontier.proto
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

const [addr, protoPath] = process.argv.slice(2);
if (!addr || !protoPath) {
  console.error('usage: node client.mjs HOST:PORT urlfrontier.proto');
  process.exit(2);
}
const def = protoLoader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const pkg = grpc.loadPackageDefinition(def).urlfrontier;
const c = new pkg.URLFrontier(addr, grpc.credentials.createInsecure());
const deadline = () => ({ deadline: Date.now() + 20000 });

const unary = (name, req) => new Promise((resolve) => {
  c[name](req, deadline(), (err, res) => resolve(err ? { code: grpc.status[err.code], error: err.details } : res));
});

const serverStream = (name, req) => new Promise((resolve) => {
  const out = [];
  const s = c[name](req, deadline());
  s.on('data', (m) => out.push(m));
  s.on('error', (err) => resolve({ code: grpc.status[err.code], items: out }));
  s.on('end', () => resolve({ code: 'OK', items: out }));
});

const bidi = (name, msgs) => new Promise((resolve) => {
  const out = [];
  const s = c[name](deadline());
  s.on('data', (m) => out.push(m));
  s.on('error', (err) => resolve({ code: grpc.status[err.code], items: out }));
  s.on('end', () => resolve({ code: 'OK', items: out }));
  for (const m of msgs) s.write(m);
  s.end();
});

const info = (url, extra = {}) => ({ url, ...extra });
const r = {};
r.put = await bidi('PutURLs', [
  { ID: 'd1', discovered: { info: info('http://js.test/1', { metadata: { src: { values: ['node'] } } }) } },
  { ID: 'd2', discovered: { info: info('http://js.test/2') } },
  { ID: 'k1', known: { info: info('http://js.test/done'), refetchable_from_date: '0' } },
  { ID: 'bad', discovered: { info: info('not a url') } },
  { ID: 'c2', discovered: { info: info('http://other.test/', { crawlID: 'jsCrawl', key: 'mykey' }) } },
]);
r.putDiscovered = await bidi('PutDiscovered', [{ ID: 'b1', items: [info('http://js.test/1'), info('http://js.test/3')] }]);
r.nodes = await unary('ListNodes', {});
r.crawls = await unary('ListCrawls', {});
r.queues = await unary('ListQueues', { crawlID: 'jsCrawl', include_inactive: true });
r.statsBefore = await unary('GetStats', { key: 'js.test' });
r.get = await serverStream('GetURLs', { max_urls_per_queue: 2, key: 'js.test', crawlID: '', delay_requestable: 60 });
r.statsLeased = await unary('GetStats', { key: 'js.test' });
r.status = await unary('GetURLStatus', { url: 'http://js.test/1' });
r.statusMissing = await unary('GetURLStatus', { url: 'http://js.test/missing' });
r.count = await unary('CountURLs', { filter: 'JS.TEST', ignoreCase: true });
r.list = await serverStream('ListURLs', { key: 'js.test', size: 10 });
r.setDelay = await unary('SetDelay', { key: 'js.test', delay_requestable: 2 });
r.block = await unary('BlockQueueUntil', { key: 'mykey', crawlID: 'jsCrawl', time: String(Math.floor(Date.now() / 1000) + 3600) });
r.getBlocked = await serverStream('GetURLs', { crawlID: 'jsCrawl' });
r.limit = await unary('SetCrawlLimit', { key: 'nope', limit: 3 });
r.logLevel = await unary('SetLogLevel', { package: 'urlfrontier', level: 'DEBUG' });
r.setInactive = await unary('SetActive', { state: false });
r.active = await unary('GetActive', {});
r.getInactive = await serverStream('GetURLs', { anyCrawlID: {} });
await unary('SetActive', { state: true });
r.purge = await unary('PurgeURLs', { key: 'nothing.test', days: 1 });
r.deleteQueue = await unary('DeleteQueue', { key: 'js.test' });
r.deleteCrawl = await unary('DeleteCrawl', { value: 'jsCrawl' });
r.crawlsAfter = await unary('ListCrawls', {});
console.log(JSON.stringify(r));
c.close();
