package dedup

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// textGen produces realistic-looking page text: words drawn from a Zipf
// distribution over a generated vocabulary (natural language word
// frequencies are Zipfian), in sentences and paragraphs.
type textGen struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newTextGen(seed uint64) *textGen {
	rng := rand.New(rand.NewPCG(seed, 1))
	vocabRng := rand.New(rand.NewPCG(42, 42)) // one language for all pages
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	vocab := make([]string, 20000)
	for i := range vocab {
		n := 2 + vocabRng.IntN(9)
		var b strings.Builder
		for range n {
			// Skewed letter choice: common letters more often.
			b.WriteByte(letters[min(vocabRng.IntN(26), vocabRng.IntN(26))])
		}
		vocab[i] = b.String()
	}
	return &textGen{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

// page returns about words words of text.
func (g *textGen) page(words int) string {
	var b strings.Builder
	for w := 0; w < words; {
		n := 5 + g.rng.IntN(16)
		for i := range n {
			word := g.vocab[g.zipf.Uint64()]
			if i == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			b.WriteString(word)
			if i < n-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
		if g.rng.IntN(6) == 0 {
			b.WriteString("\n\n")
		}
		w += n
	}
	return b.String()
}

// stamped adds a "last updated" line with t, as dynamic pages do.
func stamped(body string, t time.Time) string {
	return fmt.Sprintf("Home | News | Contact\n%s\nPage generated %s (%d visitors online)\n",
		body, t.Format("Monday 2 January 2006 15:04:05 MST"), t.Second()*7+t.Minute())
}

// stampedISO adds a numeric timestamp and counter.
func stampedISO(body string, t time.Time) string {
	return fmt.Sprintf("Home | News | Contact\n%s\nLast modified %s, %d views\n", body, t.Format(time.RFC3339), t.Unix()%9973)
}
