// Independent structured-data extraction for Courtesy's cross-check tests
// and benchmarks: rdfa-streaming-parser (RDFa 1.1, HTML profile),
// microdata-rdf-streaming-parser (Microdata to RDF) and jsonld.js (JSON-LD
// in <script type="application/ld+json">, found with htmlparser2).
//
//   node extract.mjs MANIFEST.json          -> {"id": {"quads": [...]} | {"error": "..."}}
//   node extract.mjs bench SYNTAX N MANIFEST -> {"bytes": B, "seconds": S}
//
// MANIFEST is [{"id", "url", "syntax": "rdfa"|"microdata"|"jsonld", "file"}].
// Terms are {"t": "iri"|"blank"|"literal", "v", "dt", "lang"}. JSON-LD
// contexts naming schema.org are served from CONTEXT (the same bundled
// context Courtesy uses, passed by the caller); others are refused.
import { readFileSync } from 'node:fs';
import { RdfaParser } from 'rdfa-streaming-parser';
import { MicrodataRdfParser } from 'microdata-rdf-streaming-parser';
import jsonld from 'jsonld';
import { Parser as HtmlParser } from 'htmlparser2';

const schemaContext = process.env.CONTEXT ? JSON.parse(readFileSync(process.env.CONTEXT, 'utf8')) : null;

function isSchemaOrg(u) {
  const s = u.replace(/^https?:\/\//, '').replace(/^www\./, '').replace(/\/$/, '');
  return s === 'schema.org' || s === 'schema.org/docs/jsonldcontext.json' || s === 'schema.org/docs/jsonldcontext.jsonld';
}

const documentLoader = async (url) => {
  if (schemaContext && isSchemaOrg(url)) {
    return { contextUrl: null, documentUrl: url, document: schemaContext };
  }
  throw new Error('remote context refused: ' + url);
};

function term(t) {
  switch (t.termType) {
    case 'NamedNode': return { t: 'iri', v: t.value };
    case 'BlankNode': return { t: 'blank', v: t.value };
    case 'Literal': return { t: 'literal', v: t.value, dt: t.datatype ? t.datatype.value : '', lang: t.language || '' };
    default: return { t: 'other', v: String(t.value) };
  }
}

function streamParse(parser, html) {
  return new Promise((resolve, reject) => {
    const quads = [];
    parser.on('data', (q) => quads.push(q));
    parser.on('error', reject);
    parser.on('end', () => resolve(quads));
    parser.write(html);
    parser.end();
  });
}

function ldScripts(html) {
  const scripts = [];
  let inScript = false;
  let buf = '';
  const p = new HtmlParser({
    onopentag(name, attrs) {
      if (name === 'script' && (attrs.type || '').split(';')[0].trim().toLowerCase() === 'application/ld+json') {
        inScript = true;
        buf = '';
      }
    },
    ontext(t) { if (inScript) buf += t; },
    onclosetag(name) {
      if (name === 'script' && inScript) { scripts.push(buf); inScript = false; }
    },
  }, { decodeEntities: false });
  p.write(html);
  p.end();
  return scripts;
}

async function extract(syntax, url, html) {
  switch (syntax) {
    case 'rdfa':
      return streamParse(new RdfaParser({ baseIRI: url, contentType: 'text/html', profile: 'html' }), html);
    case 'microdata':
      return streamParse(new MicrodataRdfParser({ baseIRI: url }), html);
    case 'jsonld': {
      const out = [];
      let n = 0;
      for (const text of ldScripts(html)) {
        let doc;
        try { doc = JSON.parse(text); } catch { continue; }
        let quads;
        try { quads = await jsonld.toRDF(doc, { base: url, documentLoader }); } catch { continue; }
        // Blank node labels are per script: keep scripts apart.
        n++;
        for (const q of quads) {
          for (const k of ['subject', 'object']) {
            if (q[k].termType === 'BlankNode') q[k] = { termType: 'BlankNode', value: 's' + n + '_' + q[k].value };
          }
          out.push(q);
        }
      }
      return out;
    }
  }
  throw new Error('unknown syntax ' + syntax);
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === 'bench') {
    const [, syntax, n, manifest] = args;
    const pages = JSON.parse(readFileSync(manifest, 'utf8')).map((p) => ({ ...p, html: readFileSync(p.file, 'utf8') }));
    let bytes = 0;
    const start = process.hrtime.bigint();
    for (let i = 0; i < Number(n); i++) {
      for (const p of pages) {
        await extract(syntax, p.url, p.html);
        bytes += Buffer.byteLength(p.html);
      }
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    process.stdout.write(JSON.stringify({ bytes, seconds }) + '\n');
    return;
  }
  const result = {};
  for (const p of JSON.parse(readFileSync(args[0], 'utf8'))) {
    try {
      const quads = await extract(p.syntax, p.url, readFileSync(p.file, 'utf8'));
      result[p.id] = { quads: quads.map((q) => [term(q.subject), term(q.predicate), term(q.object)]) };
    } catch (e) {
      result[p.id] = { error: String(e && e.message || e) };
    }
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
