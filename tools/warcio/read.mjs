#!/usr/bin/env node
// Reads a .warc or .warc.gz file with Webrecorder's warcio.js, an
// implementation independent of Courtesy's Go reader, and prints one JSON
// object per record:
//
//   {"offset", "length", "type", "uri", "status", "surt",
//    "blockDigest", "blockDigestComputed", "blockDigestOK",
//    "payloadDigest", "payloadDigestComputed", "payloadDigestOK",
//    "contentLength"}
//
// Digests are recomputed here (SHA-1, RFC 4648 base32) over the bytes
// warcio returns: the block with HTTP parsing off, the payload (HTTP body
// after removing chunked transfer-encoding, content-encoding kept) with HTTP
// parsing on. Used by internal/warc's cross-check test.
//
// Usage: node read.mjs FILE
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser, AsyncIterReader, getSurt } from "warcio";

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32(bytes) {
  let bits = 0, value = 0, out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

function sha1(bytes) {
  return "sha1:" + base32(createHash("sha1").update(bytes).digest());
}

async function blocks(path) {
  const out = [];
  const parser = new WARCParser(createReadStream(path), { parseHttp: false });
  for await (const record of parser) {
    const block = await record.readFully(false);
    out.push({
      offset: parser.offset,
      type: record.warcType,
      uri: record.warcTargetURI ?? null,
      contentLength: record.warcContentLength,
      blockDigest: record.warcBlockDigest ?? null,
      blockDigestComputed: sha1(block),
      blockLength: block.length,
    });
    // recordLength is known once the record is consumed.
    out[out.length - 1].length = parser.recordLength;
  }
  return out;
}

async function payloads(path) {
  const out = [];
  const parser = new WARCParser(createReadStream(path), { parseHttp: true });
  for await (const record of parser) {
    let payloadDigestComputed = null;
    let status = null;
    const t = record.warcType;
    if (record.httpHeaders) {
      if (t === "response" || t === "revisit") status = record.httpHeaders.statusCode;
      let raw = await record.readFully(false);
      const te = record.httpHeaders.headers.get("Transfer-Encoding");
      if (te && te.toLowerCase() === "chunked") {
        raw = await new AsyncIterReader([raw], null, true).readFully();
      }
      payloadDigestComputed = sha1(raw);
    } else {
      const raw = await record.readFully(false);
      if (t === "resource") payloadDigestComputed = sha1(raw);
    }
    out.push({ status, payloadDigest: record.warcPayloadDigest ?? null, payloadDigestComputed });
  }
  return out;
}

async function main() {
  const path = process.argv[2];
  if (!path) {
    console.error("usage: node read.mjs FILE.warc[.gz]");
    process.exit(2);
  }
  const a = await blocks(path);
  const b = await payloads(path);
  if (a.length !== b.length) {
    console.error(`record count differs between passes: ${a.length} vs ${b.length}`);
    process.exit(1);
  }
  for (let i = 0; i < a.length; i++) {
    const r = { ...a[i], ...b[i] };
    r.surt = r.uri && /^https?:/.test(r.uri) ? getSurt(r.uri) : null;
    r.blockDigestOK = r.blockDigest === null ? null : r.blockDigest === r.blockDigestComputed;
    // A revisit's payload digest names the earlier capture's payload.
    r.payloadDigestOK =
      r.payloadDigest === null || r.type === "revisit" || r.payloadDigestComputed === null
        ? null
        : r.payloadDigest === r.payloadDigestComputed;
    process.stdout.write(JSON.stringify(r) + "\n");
  }
}

main().catch((err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
});
