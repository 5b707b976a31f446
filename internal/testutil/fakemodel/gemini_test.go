package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func postGemini(t *testing.T, s *Server, method, body string) (int, string) {
	t.Helper()
	url := s.URL() + "/v1beta/models/echo:" + method
	if method == "streamGenerateContent" {
		url += "?alt=sse"
	}
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestGeminiDialect: streamed text, a write_file function call, the
// follow-up after its functionResponse, a side request, countTokens and
// an unknown method, in the Gemini API's shapes.
func TestGeminiDialect(t *testing.T) {
	s := New(t)
	s.On(Contains("WRITE"), WriteFile("/ws/a.txt", "hi\n").WithFollowUp("Wrote it."))
	tools := `"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"write_file"}]}]`
	user := func(text string) string { return `{"role":"user","parts":[{"text":` + strconvQuote(text) + `}]}` }

	code, body := postGemini(t, s, "streamGenerateContent", `{"contents":[`+user("hello")+`],`+tools+`}`)
	var text strings.Builder
	for _, line := range strings.Split(body, "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var c struct {
			Candidates []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		text.WriteString(c.Candidates[0].Content.Parts[0].Text)
	}
	if code != 200 || text.String() != "Hello from fake model." || !strings.Contains(body, `"finishReason":"STOP"`) || !strings.Contains(body, `"usageMetadata"`) {
		t.Fatalf("stream %d %q:\n%s", code, text.String(), body)
	}

	code, body = postGemini(t, s, "generateContent", `{"contents":[`+user("hello")+`,{"role":"model","parts":[{"text":"x"}]},`+user("WRITE please")+`],`+tools+`}`)
	var call struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall struct {
						Name string         `json:"name"`
						Args map[string]any `json:"args"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(body), &call); err != nil || code != 200 {
		t.Fatalf("call %d %s: %v", code, body, err)
	}
	fc := call.Candidates[0].Content.Parts[0].FunctionCall
	if fc.Name != "write_file" || fc.Args["file_path"] != "/ws/a.txt" || fc.Args["content"] != "hi\n" {
		t.Fatalf("function call %+v", fc)
	}
	cont := `{"contents":[` + user("WRITE please") + `,{"role":"model","parts":[{"functionCall":{"name":"write_file","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"write_file","response":{"output":"ok"}}}]}],` + tools + `}`
	if code, body = postGemini(t, s, "generateContent", cont); code != 200 || !strings.Contains(body, "Wrote it.") {
		t.Fatalf("follow-up %d %s", code, body)
	}
	if code, body = postGemini(t, s, "generateContent", `{"contents":[`+user("WRITE a title")+`]}`); code != 200 || !strings.Contains(body, "Fake title") {
		t.Fatalf("side %d %s", code, body)
	}
	if code, body = postGemini(t, s, "countTokens", `{"contents":[`+user("x")+`]}`); code != 200 || !strings.Contains(body, `"totalTokens":10`) {
		t.Fatalf("countTokens %d %s", code, body)
	}
	if code, body = postGemini(t, s, "embedContent", `{}`); code != 404 || !strings.Contains(body, `"status":"NOT_FOUND"`) {
		t.Fatalf("unknown method %d %s", code, body)
	}
	// One prompt, one turn-starting request each: the follow-up and the
	// side request are not counted.
	if n := s.Count("WRITE please"); n != 1 {
		t.Fatalf("Count = %d", n)
	}
	reqs := s.Requests()
	if reqs[0].API != GeminiGenerate || !reqs[0].Stream || reqs[0].Model != "echo" || !reqs[2].Continuation || !reqs[3].Side {
		t.Fatalf("log %+v", reqs[:4])
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
