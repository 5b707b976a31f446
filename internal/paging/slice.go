package paging

// AfterKey pages an in-memory list in its given order: it returns at most
// limit items that follow the item whose key is after (from the first item
// when after is ""), and whether more follow. found is false when after
// names no item of the list; the caller reports the cursor as stale.
//
// The position is a record's key, not an index, so records inserted before
// the cursor's record (a provider listing newest first) neither repeat nor
// push records out of the next page.
func AfterKey[T any](items []T, key func(T) string, after string, limit int) (page []T, more, found bool) {
	start := 0
	if after != "" {
		start = -1
		for i, it := range items {
			if key(it) == after {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, false, false
		}
	}
	end := min(start+limit, len(items))
	return items[start:end], end < len(items), true
}

// AfterSorted pages a list sorted ascending by key: it returns at most
// limit items whose key is greater than after, and whether more follow. A
// deleted cursor record is no problem here: the next greater key follows.
func AfterSorted[T any](items []T, key func(T) string, after string, limit int) (page []T, more bool) {
	start := 0
	if after != "" {
		lo, hi := 0, len(items)
		for lo < hi {
			mid := (lo + hi) / 2
			if key(items[mid]) <= after {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		start = lo
	}
	end := min(start+limit, len(items))
	return items[start:end], end < len(items)
}

// Chunks splits ids into slices of at most size, so a query's IN list stays
// far below SQLite's 32,766 bound variables however many IDs there are.
func Chunks[T any](ids []T, size int) [][]T {
	if size <= 0 {
		size = ChunkSize
	}
	out := make([][]T, 0, (len(ids)+size-1)/size)
	for start := 0; start < len(ids); start += size {
		out = append(out, ids[start:min(start+size, len(ids))])
	}
	return out
}

// ChunkSize is the default IN-list size of chunked edge loading.
const ChunkSize = 500
