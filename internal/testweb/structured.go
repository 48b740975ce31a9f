package testweb

// The structured-data sites: pages carrying schema.org data as JSON-LD,
// microdata and RDFa (people, products, events, recipes, nested items and
// lists), and a hostile site whose pages probe an extractor's bounds and
// parsing (huge and malformed JSON-LD, deep nesting, invalid IRIs, prefix
// tricks). Their content is fixed (it does not depend on Config.Seed), so
// that tests can hold hand-written expected quads for them.

import (
	"sort"
	"strings"
)

// specStructured marks the structured-data sites. It lies outside the
// hazard sites' iota range on purpose.
const specStructured special = 1 << 16

// KindStructured is the kind of the structured-data sites.
const KindStructured Kind = "structured"

// StructuredPage is one page of the structured-data sites.
type StructuredPage struct {
	URL string
	// Syntax is the markup the page's data is in: "jsonld", "microdata",
	// "rdfa", or "mixed" (all three).
	Syntax string
	// Hostile is set for the pages that test bounds and bad input, where
	// an extractor without Courtesy's bounds legitimately differs.
	Hostile bool
	Body    []byte
}

// structuredHosts are the structured-data sites, by syntax.
var structuredHosts = []string{
	"structured-jsonld.test", "structured-microdata.test", "structured-rdfa.test", "structured-hostile.test",
}

// StructuredPages returns every page of the structured-data sites (their
// home pages excepted), sorted by URL.
func StructuredPages() []StructuredPage {
	var out []StructuredPage
	for _, host := range structuredHosts {
		for path, p := range structuredContent(host) {
			p.URL = "http://" + host + path
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// addStructured adds the structured-data sites to the web.
func (w *Web) addStructured() {
	for _, host := range structuredHosts {
		w.add(&Site{Host: host, Kinds: []Kind{KindStructured}, RobotsStatus: 200,
			Robots: []byte(defaultRobots), special: specStructured})
	}
}

// routeStructured serves a structured-data site: a home page linking every
// page, and the pages.
func (w *Web) routeStructured(s *Site, rt *route) bool {
	pages := structuredContent(s.Host)
	if rt.path == "/" {
		paths := make([]string, 0, len(pages))
		for p := range pages {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>" + s.Host + "</title></head><body><h1>" + s.Host + "</h1><ul>")
		for _, p := range paths {
			b.WriteString(`<li><a href="` + p + `">` + p + "</a></li>")
		}
		b.WriteString("</ul></body></html>\n")
		rt.bytes(ClassPage, "text/html; charset=utf-8", []byte(b.String()))
		return true
	}
	p, ok := pages[rt.path]
	if !ok {
		return false
	}
	rt.bytes(ClassPage, "text/html; charset=utf-8", p.Body)
	return true
}

func sdPage(title, body string) []byte {
	return []byte("<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>" + title + "</title></head>\n<body>\n" + body + "\n</body>\n</html>\n")
}

func sdScript(json string) string {
	return `<script type="application/ld+json">` + json + "</script>\n"
}

// structuredContent returns the pages of one structured-data site by path.
func structuredContent(host string) map[string]StructuredPage {
	switch host {
	case "structured-jsonld.test":
		return map[string]StructuredPage{
			"/person.html": {Syntax: "jsonld", Body: sdPage("Ada Lovelace", `<h1>Ada Lovelace</h1>
`+sdScript(`{"@context": "https://schema.org", "@type": "Person", "@id": "#ada",
 "name": "Ada Lovelace", "jobTitle": "Analyst", "url": "http://structured-jsonld.test/person.html",
 "sameAs": ["https://en.wikipedia.org/wiki/Ada_Lovelace", "https://www.wikidata.org/wiki/Q7259"],
 "birthDate": "1815-12-10",
 "address": {"@type": "PostalAddress", "addressLocality": "London", "addressCountry": "GB"},
 "knows": {"@type": "Person", "@id": "#babbage", "name": "Charles Babbage"}}`))},
			"/product.html": {Syntax: "jsonld", Body: sdPage("Brass lamp", `<h1>Brass lamp</h1>
`+sdScript(`{"@context": "https://schema.org/", "@type": "Product", "name": "Brass desk lamp",
 "sku": "LAMP-042", "image": "/img/lamp.jpg", "description": "A brass lamp with a green shade.",
 "brand": {"@type": "Brand", "name": "Lumen"},
 "offers": {"@type": "Offer", "price": "49.90", "priceCurrency": "EUR",
   "availability": "https://schema.org/InStock", "url": "/product.html"},
 "aggregateRating": {"@type": "AggregateRating", "ratingValue": 4.5, "reviewCount": 12}}`))},
			"/event.html": {Syntax: "jsonld", Body: sdPage("Concert", sdScript(`{"@context": "http://schema.org", "@type": "MusicEvent",
 "name": "Spring concert", "startDate": "2026-04-18T20:00:00+02:00",
 "location": {"@type": "Place", "name": "Town hall", "address": "1 Main Street"},
 "performer": [{"@type": "MusicGroup", "name": "The Quartet"}, {"@type": "Person", "name": "Solo Violin"}]}`))},
			"/recipe.html": {Syntax: "jsonld", Body: sdPage("Pancakes", sdScript(`{"@context": "https://schema.org", "@type": "Recipe",
 "name": "Pancakes", "author": {"@type": "Person", "name": "Grace"},
 "recipeYield": "8 pancakes", "cookTime": "PT20M",
 "recipeIngredient": ["200 g flour", "2 eggs", "300 ml milk"],
 "recipeInstructions": {"@list": [
   {"@type": "HowToStep", "text": "Mix the flour and the eggs."},
   {"@type": "HowToStep", "text": "Add the milk slowly."},
   {"@type": "HowToStep", "text": "Fry in butter."}]}}`))},
			"/list.html": {Syntax: "jsonld", Body: sdPage("Top products", sdScript(`{"@context": "https://schema.org", "@type": "ItemList",
 "name": "Top lamps", "itemListElement": [
  {"@type": "ListItem", "position": 1, "item": {"@type": "Product", "@id": "/product.html#lamp", "name": "Brass desk lamp"}},
  {"@type": "ListItem", "position": 2, "item": {"@type": "Product", "name": "Paper lantern"}}]}`)+
				sdScript(`{"@context": {"@vocab": "http://schema.org/"}, "@graph": [
  {"@id": "http://structured-jsonld.test/#org", "@type": "Organization", "name": "Lumen Ltd", "founder": {"@id": "http://structured-jsonld.test/person.html#ada"}},
  {"@id": "http://structured-jsonld.test/person.html#ada", "worksFor": {"@id": "http://structured-jsonld.test/#org"}}]}`))},
		}
	case "structured-microdata.test":
		return map[string]StructuredPage{
			"/person.html": {Syntax: "microdata", Body: sdPage("Grace Hopper", `<div itemscope itemtype="https://schema.org/Person" itemid="#grace">
  <h1 itemprop="name">Grace Hopper</h1>
  <p><span itemprop="jobTitle">Rear admiral</span>, born <time itemprop="birthDate" datetime="1906-12-09">9 December 1906</time>.</p>
  <a itemprop="sameAs" href="https://en.wikipedia.org/wiki/Grace_Hopper">Wikipedia</a>
  <div itemprop="address" itemscope itemtype="https://schema.org/PostalAddress">
    <span itemprop="addressLocality">New York</span>, <span itemprop="addressCountry">US</span>
  </div>
  <img itemprop="image" src="/img/grace.jpg" alt="portrait">
</div>`)},
			"/product.html": {Syntax: "microdata", Body: sdPage("Paper lantern", `<div itemscope itemtype="http://schema.org/Product">
  <h1 itemprop="name">Paper lantern</h1>
  <meta itemprop="sku" content="LANT-7">
  <div itemprop="offers" itemscope itemtype="http://schema.org/Offer">
    <data itemprop="price" value="12.5">12,50 €</data>
    <meta itemprop="priceCurrency" content="EUR">
    <link itemprop="availability" href="http://schema.org/InStock">
  </div>
  <div itemprop="aggregateRating" itemscope itemtype="http://schema.org/AggregateRating">
    <meter itemprop="ratingValue" value="4" min="0" max="5">4 of 5</meter>
    <span itemprop="reviewCount">3</span> reviews
  </div>
</div>`)},
			"/event.html": {Syntax: "microdata", Body: sdPage("Lecture", `<div itemscope itemtype="http://schema.org/Event" itemref="venue">
  <h1 itemprop="name">Evening lecture</h1>
  <time itemprop="startDate" datetime="2026-03-02T18:30:00Z">2 March, 18:30</time>
  <time itemprop="duration" datetime="PT1H30M">90 minutes</time>
</div>
<p id="venue" itemprop="location" itemscope itemtype="http://schema.org/Place"><span itemprop="name">Library</span></p>`)},
			"/recipe.html": {Syntax: "microdata", Body: sdPage("Soup", `<article itemscope itemtype="http://schema.org/Recipe">
  <h1 itemprop="name">Tomato soup</h1>
  <p>By <span itemprop="author" itemscope itemtype="http://schema.org/Person"><span itemprop="name">Alan</span></span></p>
  <ul>
    <li itemprop="recipeIngredient">1 kg tomatoes</li>
    <li itemprop="recipeIngredient">1 onion</li>
  </ul>
  <ol>
    <li itemprop="recipeInstructions" itemscope itemtype="http://schema.org/HowToStep"><span itemprop="text">Chop.</span></li>
    <li itemprop="recipeInstructions" itemscope itemtype="http://schema.org/HowToStep"><span itemprop="text">Simmer.</span></li>
  </ol>
</article>`)},
			"/nested.html": {Syntax: "microdata", Body: sdPage("Organisation", `<div itemscope itemtype="http://schema.org/Organization" itemid="http://structured-microdata.test/#org">
  <span itemprop="name">Hopper Labs</span>
  <div itemprop="member" itemscope itemtype="http://schema.org/OrganizationRole">
    <span itemprop="roleName">Director</span>
    <div itemprop="member" itemscope itemtype="http://schema.org/Person"><span itemprop="name">Grace</span>
      <div itemprop="colleague" itemscope itemtype="http://schema.org/Person"><span itemprop="name">Alan</span></div>
    </div>
  </div>
  <span itemprop="additionalType">http://example.org/Lab</span>
</div>`)},
		}
	case "structured-rdfa.test":
		return map[string]StructuredPage{
			"/person.html": {Syntax: "rdfa", Body: sdPage("Alan Turing", `<div vocab="http://schema.org/" typeof="Person" resource="#alan">
  <h1 property="name">Alan Turing</h1>
  <p><span property="jobTitle">Mathematician</span>, born <time property="birthDate" datetime="1912-06-23">23 June 1912</time>.</p>
  <a property="sameAs" href="https://en.wikipedia.org/wiki/Alan_Turing">Wikipedia</a>
  <div property="address" typeof="PostalAddress"><span property="addressLocality">London</span></div>
  <span property="knows" typeof="Person" resource="#grace"><span property="name">Grace</span></span>
</div>`)},
			"/product.html": {Syntax: "rdfa", Body: sdPage("Kettle", `<div vocab="http://schema.org/" typeof="Product">
  <h1 property="name">Copper kettle</h1>
  <img property="image" src="/img/kettle.jpg" alt="">
  <div property="offers" typeof="Offer">
    <span property="price" content="35.00">35 €</span><meta property="priceCurrency" content="EUR">
    <link property="availability" href="http://schema.org/OutOfStock">
  </div>
</div>`)},
			"/event.html": {Syntax: "rdfa", Body: sdPage("Festival", `<div prefix="s: http://schema.org/ dc: http://purl.org/dc/terms/" typeof="s:Festival" about="#fest">
  <h1 property="s:name dc:title">Summer festival</h1>
  <time property="s:startDate" datetime="2026-07-01">1 July</time> to <time property="s:endDate" datetime="2026-07-03">3 July</time>
  <div rel="s:location"><div typeof="s:Place"><span property="s:name">The park</span></div></div>
</div>`)},
			"/recipe.html": {Syntax: "rdfa", Body: sdPage("Bread", `<div vocab="http://schema.org/" typeof="Recipe" resource="#bread">
  <h1 property="name">Bread</h1>
  <ul><li property="recipeIngredient">500 g flour</li><li property="recipeIngredient">water</li></ul>
  <ol>
    <li property="recipeInstructions" inlist>Knead.</li>
    <li property="recipeInstructions" inlist>Let it rise.</li>
    <li property="recipeInstructions" inlist>Bake.</li>
  </ol>
</div>`)},
			"/lite.html": {Syntax: "rdfa", Body: sdPage("Shop", `<body vocab="http://schema.org/">
<div typeof="Store" resource="#shop"><span property="name">Corner shop</span>
  <div property="employee" typeof="Person"><span property="name">Sam</span><span property="jobTitle" lang="en">Clerk</span></div>
  <a rel="sameAs" href="https://example.org/shop">elsewhere</a>
</div>
</body>`)},
		}
	case "structured-hostile.test":
		return map[string]StructuredPage{
			"/huge-jsonld.html": {Syntax: "jsonld", Hostile: true, Body: sdPage("Huge", sdScript(`{"@context": "https://schema.org", "@type": "Thing", "name": "huge", "description": "`+strings.Repeat("spam ", 220_000)+`"}`)+
				sdScript(`{"@context": "https://schema.org", "@type": "Thing", "name": "small"}`))},
			"/deep.html": {Syntax: "mixed", Hostile: true, Body: sdPage("Deep", `<div itemscope itemtype="http://schema.org/Thing"><span itemprop="name">top</span>`+
				strings.Repeat(`<div itemprop="subjectOf" itemscope>`, 200)+strings.Repeat("</div>", 201)+
				sdScript(strings.Repeat(`{"@context": {"@vocab": "http://schema.org/"}, "subjectOf": `, 200)+`{"name": "bottom"}`+strings.Repeat("}", 200)))},
			"/invalid-iris.html": {Syntax: "mixed", Hostile: true, Body: sdPage("Invalid IRIs", `<div itemscope itemtype="http://schema.org/Thing" itemid="http://bad host/x">
  <span itemprop="name">bad subject</span></div>
<div itemscope itemtype="http://schema.org/Thing"><a itemprop="url" href="http://ex.org/a b<c>">link</a><span itemprop="name">good</span></div>
`+sdScript(`{"@context": "https://schema.org", "@id": "http://ex.org/{x}", "@type": "Thing", "name": "curly"}`)+
				sdScript(`{"@context": "https://schema.org", "@id": "http://ex.org/ok", "@type": "Thing", "name": "fine", "url": "http://ex.org/a b"}`)+
				`<div vocab="http://schema.org/" typeof="Thing" about="http://ex.org/&quot;q&quot;"><span property="name">quoted</span></div>`)},
			"/prefix-tricks.html": {Syntax: "rdfa", Hostile: true, Body: sdPage("Prefix tricks", `<div prefix="schema: http://evil.example/ foaf:   http://xmlns.com/foaf/0.1/  _: http://blank.example/ bad http://x/">
  <span about="#a" property="schema:name">redefined schema</span>
  <span about="#a" property="foaf:name">spaces are fine</span>
  <span about="#a" property="undefined:name">undefined prefix is an IRI</span>
  <span about="[nope:x]" property="foaf:nick">unknown safe CURIE: subject from parent</span>
  <span about="#a" property="_:blank">blank predicate ignored</span>
  <div prefix="foaf: http://override.example/"><span about="#a" property="foaf:name">inner override</span></div>
</div>`)},
			"/malformed-jsonld.html": {Syntax: "jsonld", Hostile: true, Body: sdPage("Malformed", sdScript(`{"@context": "https://schema.org", "@type": "Thing", "name": "unterminated`)+
				sdScript(`{"@context": "http://127.0.0.1:9/remote-context.jsonld", "name": "remote"}`)+
				sdScript(`{"@context": "https://schema.org", "@type": "Thing", "name": "fine", "@id": 42}`)+
				sdScript(`[{"@context": "https://schema.org", "@type": "Thing", "name": "survivor"}]`))},
			"/mixed.html": {Syntax: "mixed", Body: sdPage("Mixed", `<div itemscope itemtype="http://schema.org/Person"><span itemprop="name">Micro</span></div>
<div vocab="http://schema.org/" typeof="Person"><span property="name">Rdfa</span></div>
`+sdScript(`{"@context": "https://schema.org", "@type": "Person", "name": "Json"}`))},
		}
	}
	return nil
}
