package main

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/crawlkit/crawlkit/webgraph"
)

const (
	defaultLimit = 100
	maxLimit     = 10000
)

// link is one neighbour in a JSON answer.
type link struct {
	ID  int    `json:"id"`
	URL string `json:"url"`
}

// neighbours is the answer of /out and /in.
type neighbours struct {
	ID     int    `json:"id"`
	URL    string `json:"url"`
	Degree int    `json:"degree"` // total number of out- or in-links
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	Links  []link `json:"links"`
}

// stats is the answer of /stats.
type stats struct {
	Nodes int64 `json:"nodes"`
	Arcs  int64 `json:"arcs"`
	// Compressed stores only:
	BitsPerLink          float64 `json:"bits_per_link,omitempty"`
	TransposeBitsPerLink float64 `json:"transpose_bits_per_link,omitempty"`
	URLMapBytes          int     `json:"url_map_bytes,omitempty"`
}

type apiError struct {
	Error string `json:"error"`
}

// newHandler serves connectivity queries over s:
//
//	GET /out?url=U | /out?id=N   out-links, paginated with limit and offset
//	GET /in?url=U  | /in?id=N    in-links
//	GET /stats                    node and arc counts (bits per link when compressed)
//	GET /                         an HTML index page with a query form
//	GET /view?url=U | /view?id=N  an HTML page of U's out- and in-links
//
// Malformed parameters get 400, unknown URLs and ids 404; any other path
// 404 with JSON.
func newHandler(s webgraph.GraphStore) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { serveIndex(w, s) })
	mux.HandleFunc("GET /view", func(w http.ResponseWriter, r *http.Request) { serveView(w, r, s) })
	// GET, not any method: a POST to /out still gets 405 from the mux.
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "no endpoint "+strconv.Quote(r.URL.Path)+": see / for the index page and the API")
	})
	mux.HandleFunc("GET /out", func(w http.ResponseWriter, r *http.Request) {
		serveNeighbours(w, r, s, s.Out)
	})
	mux.HandleFunc("GET /in", func(w http.ResponseWriter, r *http.Request) {
		serveNeighbours(w, r, s, s.In)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		st := stats{Nodes: int64(s.NumNodes()), Arcs: s.NumArcs()}
		if cs, ok := s.(*webgraph.Store); ok && st.Arcs > 0 {
			st.BitsPerLink = float64(cs.Graph().StreamBits()) / float64(st.Arcs)
			st.TransposeBitsPerLink = float64(cs.Transpose().StreamBits()) / float64(st.Arcs)
			st.URLMapBytes = cs.URLs().SizeBytes()
		}
		writeJSON(w, http.StatusOK, st)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do then
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// intParam parses a non-negative integer query parameter of at most 64
// bits, saturated at the largest int: an offset of 2³³ is past the end on
// a 32-bit build as on a 64-bit one, not malformed.
func intParam(r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return int(min(n, math.MaxInt)), true
}

func serveNeighbours(w http.ResponseWriter, r *http.Request, s webgraph.GraphStore, f func(int, []int) ([]int, error)) {
	q := r.URL.Query()
	_, hasURL := q["url"]
	_, hasID := q["id"]
	if hasURL == hasID {
		fail(w, http.StatusBadRequest, "give exactly one of url= and id=")
		return
	}
	limit, ok := intParam(r, "limit", defaultLimit)
	if !ok || limit > maxLimit {
		fail(w, http.StatusBadRequest, "limit must be an integer in [0, "+strconv.Itoa(maxLimit)+"]")
		return
	}
	offset, ok := intParam(r, "offset", 0)
	if !ok {
		fail(w, http.StatusBadRequest, "offset must be a non-negative integer")
		return
	}
	var id int
	if hasURL {
		u := q.Get("url")
		if u == "" {
			fail(w, http.StatusBadRequest, "empty url")
			return
		}
		var err error
		if id, err = lookup(s, u); err != nil {
			switch {
			case errors.Is(err, webgraph.ErrUnknownURL):
				fail(w, http.StatusNotFound, "unknown URL "+strconv.Quote(u))
			case errors.Is(err, errNotURL):
				fail(w, http.StatusBadRequest, err.Error())
			default:
				fail(w, http.StatusInternalServerError, err.Error())
			}
			return
		}
	} else {
		var ok bool
		if id, ok = intParam(r, "id", 0); !ok {
			fail(w, http.StatusBadRequest, "id must be a non-negative integer")
			return
		}
		if id >= s.NumNodes() {
			fail(w, http.StatusNotFound, "no node with id "+strconv.Itoa(id))
			return
		}
	}
	ids, err := f(id, nil)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	u, err := s.URL(id)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	ans := neighbours{ID: id, URL: u, Degree: len(ids), Offset: offset, Limit: limit, Links: []link{}}
	if offset < len(ids) {
		page := ids[offset:min(len(ids), offset+limit)]
		for _, y := range page {
			yu, err := s.URL(y)
			if err != nil {
				fail(w, http.StatusInternalServerError, err.Error())
				return
			}
			ans.Links = append(ans.Links, link{ID: y, URL: yu})
		}
	}
	writeJSON(w, http.StatusOK, ans)
}
