package desk

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// assetFiles are the page's static files: the desk's own style sheet and
// script, its icon, and the vendored libraries with their licences (assets/vendor,
// written by assets/vendor.sh from pinned npm packages).
//
//go:embed assets/desk.css assets/desk.js assets/favicon.svg assets/vendor/*.js assets/vendor/LICENSE.* assets/vendor/VERSIONS
var assetFiles embed.FS

// asset is one static file, compressed once on first request.
type asset struct {
	once  sync.Once
	raw   []byte
	gz    []byte
	etag  string
	ctype string
}

// assets serves assetFiles under /desk/assets/.
type assets struct {
	mu    sync.Mutex
	files map[string]*asset
}

func newAssets() *assets { return &assets{files: map[string]*asset{}} }

func (a *assets) get(name string) (*asset, bool) {
	name = path.Clean("/" + name)[1:]
	if name == "" || strings.HasPrefix(name, ".") {
		return nil, false
	}
	a.mu.Lock()
	f := a.files[name]
	if f == nil {
		raw, err := fs.ReadFile(assetFiles, "assets/"+name)
		if err != nil {
			a.mu.Unlock()
			return nil, false
		}
		f = &asset{raw: raw, ctype: contentType(name)}
		a.files[name] = f
	}
	a.mu.Unlock()
	f.once.Do(func() {
		sum := sha256.Sum256(f.raw)
		f.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(f.raw)
		if zw.Close() == nil && b.Len() < len(f.raw) {
			f.gz = b.Bytes()
		}
	})
	return f, true
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	default:
		return "text/plain; charset=utf-8"
	}
}

// serve answers one asset, gzip-compressed when the client accepts it.
func (a *assets) serve(w http.ResponseWriter, r *http.Request, name string) {
	f, ok := a.get(name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "private, max-age=3600")
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && match == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.raw
	if f.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.TrimSpace(q) != "q=0" {
			return true
		}
	}
	return false
}
