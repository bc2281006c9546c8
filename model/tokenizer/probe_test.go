package tokenizer

import (
	"os"
	"testing"
	"time"

	tk "github.com/tiktoken-go/tokenizer"
)

func TestProbe(t *testing.T) {
	c, err := tk.Get(tk.R50kBase)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("../../../shared/data/tinyshakespeare.txt")
	t0 := time.Now()
	ids, _, err := c.Encode(string(b))
	t.Log(len(ids), err, time.Since(t0), ids[:12])
	_, err = tk.Get(tk.GPT2Enc)
	t.Log(err)
}
