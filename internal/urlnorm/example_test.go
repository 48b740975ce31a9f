package urlnorm_test

import (
	"fmt"
	"net/url"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

func ExampleNormalize() {
	u, err := urlnorm.Normalize("HTTP://Example.COM:80/a/./b/../index.html?PHPSESSID=1", urlnorm.CrawlDefaults())
	if err != nil {
		panic(err)
	}
	fmt.Println(u)
	// Output: http://example.com/a/
}

func ExampleResolve() {
	base, _ := url.Parse("http://example.com/docs/guide/")
	for _, href := range []string{"../img/logo.png", " intro.html#part2 ", `\about\`, "mailto:info@example.com"} {
		u, err := urlnorm.Resolve(base, href, urlnorm.CrawlDefaults())
		fmt.Println(u, err)
	}
	// Output:
	// http://example.com/docs/img/logo.png <nil>
	// http://example.com/docs/guide/intro.html <nil>
	// http://example.com/about/ <nil>
	// <nil> urlnorm: scheme not crawlable: "mailto" in "mailto:info@example.com"
}

func ExampleKey() {
	u, _ := url.Parse("https://news.example.co.uk/world")
	for _, m := range []urlnorm.KeyMode{urlnorm.ByHost, urlnorm.ByDomain} {
		k, _ := urlnorm.Key(u, m)
		fmt.Println(m, k)
	}
	// Output:
	// host news.example.co.uk
	// domain example.co.uk
}
