package control

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pulsewire/pulsewire/storage"
)

// maxFilterValues bounds the values of one filter condition: a filter can
// never need more tags than a measure may carry.
const maxFilterValues = maxTags

// ParseFilters reads the filters query parameter of a list in
// either transport: serialised JSON (filters={"operator":...}) or spread
// form (filters[operator]=...&filters[values][0]=...). It returns nil when
// no filter is given. Refused, before any lookup: malformed JSON, both
// transports at once, an unknown field or operator, a condition without
// values, an "and" without operands and two conditions on one field. Since
// tags is the only filterable field, an accepted "and" holds exactly one
// condition, which is returned.
func ParseFilters(q url.Values) (*storage.TagFilter, error) {
	var node any
	spread := spreadKeys(q)
	// A value that is not UTF-8 is refused in either form, as in a body:
	// no tag holds one.
	for _, key := range append(spread, "filters") {
		for _, v := range q[key] {
			if !utf8.ValidString(v) {
				return nil, invalidf("filters must be UTF-8 text")
			}
		}
	}
	switch raw, ok := q["filters"]; {
	case ok && len(spread) > 0:
		return nil, invalidf("filters: give the JSON form or the spread form, not both")
	case ok:
		if len(raw) != 1 {
			return nil, invalidf("filters: given %d times", len(raw))
		}
		if err := json.Unmarshal([]byte(raw[0]), &node); err != nil {
			return nil, invalidf("filters must be a JSON object")
		}
		if err := checkText([]byte(raw[0]), "filters"); err != nil {
			return nil, err
		}
	case len(spread) > 0:
		var err error
		if node, err = unspread(q, spread); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return parseCondition(node, "filters", true)
}

// parseCondition reads a condition, or at the top an "and" of conditions.
func parseCondition(node any, path string, top bool) (*storage.TagFilter, error) {
	o, ok := node.(map[string]any)
	if !ok {
		return nil, invalidf("%s must be an object", path)
	}
	op, _ := o["operator"].(string)
	switch storage.TagOperator(op) {
	case storage.TagsContain, storage.TagsOverlap, storage.TagsContainedBy:
	case "and":
		if !top {
			return nil, invalidf("%s: an and may only hold conditions", path)
		}
		return parseAnd(o, path)
	default:
		return nil, invalidf("%s.operator must be one of the following values: and, contains, overlaps, contained-by", path)
	}
	if err := onlyKeys(o, path, "operator", "name", "values"); err != nil {
		return nil, err
	}
	switch name, isString := o["name"].(string); {
	case !isString:
		return nil, invalidf("%s.name must name a field: tags", path)
	case name != "tags":
		return nil, invalidf("%s.name: unknown field %q; only tags can be filtered", path, name)
	}
	values, err := filterValues(o["values"], path+".values")
	if err != nil {
		return nil, err
	}
	return &storage.TagFilter{Operator: storage.TagOperator(op), Values: values}, nil
}

func parseAnd(o map[string]any, path string) (*storage.TagFilter, error) {
	if err := onlyKeys(o, path, "operator", "operands"); err != nil {
		return nil, err
	}
	operands, ok := o["operands"].([]any)
	if !ok || len(operands) == 0 {
		return nil, invalidf("%s.operands must hold at least one condition", path)
	}
	var found *storage.TagFilter
	for i, operand := range operands {
		f, err := parseCondition(operand, fmt.Sprintf("%s.operands.%d", path, i), false)
		if err != nil {
			return nil, err
		}
		if found != nil {
			return nil, invalidf("%s: tags appears in more than one condition; put every tag in one condition's values", path)
		}
		found = f
	}
	return found, nil
}

// filterValues reads the values of a condition: one to maxFilterValues tags.
// The spread form cannot tell one value from a list of one, so a lone
// string counts as a list of one.
func filterValues(node any, path string) ([]string, error) {
	if s, ok := node.(string); ok {
		node = []any{s}
	}
	items, ok := node.([]any)
	switch {
	case !ok || len(items) == 0:
		return nil, invalidf("%s must hold at least one tag", path)
	case len(items) > maxFilterValues:
		return nil, invalidf("%s must contain no more than %d elements", path, maxFilterValues)
	}
	values := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if msg := checkTag(s, ok); msg != "" {
			return nil, invalidf("%s.%d %s", path, i, msg)
		}
		values[i] = s
	}
	return values, nil
}

func onlyKeys(o map[string]any, path string, known ...string) error {
	var p problems
	for k := range o {
		if !slices.Contains(known, k) {
			p.addf("%s.property %s should not exist", path, k)
		}
	}
	sort.Strings(p)
	return p.err()
}

// spreadKeys returns the query keys of the spread form, filters[...], in
// one order whatever the map's, so that a query always means the same.
func spreadKeys(q url.Values) []string {
	var keys []string
	for k := range q {
		if strings.HasPrefix(k, "filters[") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// unspread rebuilds the filter object from its spread form, the way the qs
// library of Node.js writes it: filters[a][b]=v sets a.b; [n] indexes an
// array (indexes need not be dense: they give the order); [] or a repeated
// key appends. Limits keep a hostile query small: at most maxFilterValues
// entries per array and 4 levels.
func unspread(q url.Values, keys []string) (any, error) {
	root := map[string]any{}
	for _, key := range keys {
		path, ok := bracketPath(strings.TrimPrefix(key, "filters"))
		if !ok || len(path) == 0 || len(path) > 4 {
			return nil, invalidf("filters: malformed key %q", key)
		}
		for _, v := range q[key] {
			if err := setPath(root, path, v, key); err != nil {
				return nil, err
			}
		}
	}
	return compact(root), nil
}

// bracketPath splits "[a][0][]" into "a", "0", "".
func bracketPath(s string) ([]string, bool) {
	var path []string
	for s != "" {
		if s[0] != '[' {
			return nil, false
		}
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return nil, false
		}
		path = append(path, s[1:end])
		s = s[end+1:]
	}
	return path, true
}

// sparse is an array under construction: index to element.
type sparse map[int]any

func setPath(node map[string]any, path []string, value, key string) error {
	var cur any = node
	for i, seg := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if seg == "" || isIndex(seg) {
				return invalidf("filters: malformed key %q", key)
			}
			next, exists := c[seg]
			if last {
				switch e := next.(type) {
				case nil:
					c[seg] = value
				case string:
					c[seg] = sparse{0: e, 1: value} // a repeated key appends
				case sparse:
					if len(e) >= maxFilterValues {
						return invalidf("filters: too many values under %q", key)
					}
					e[nextIndex(e)] = value
				default:
					return invalidf("filters: %q mixes a value and an object", key)
				}
				return nil
			}
			if !exists {
				if path[i+1] == "" || isIndex(path[i+1]) {
					next = sparse{}
				} else {
					next = map[string]any{}
				}
				c[seg] = next
			}
			cur = next
		case sparse:
			idx := nextIndex(c)
			if seg != "" {
				if !isIndex(seg) {
					return invalidf("filters: malformed key %q", key)
				}
				idx, _ = strconv.Atoi(seg)
			}
			if _, taken := c[idx]; taken && last || len(c) >= maxFilterValues {
				return invalidf("filters: %q given twice or too many values", key)
			}
			if last {
				c[idx] = value
				return nil
			}
			next, exists := c[idx]
			if !exists {
				next = map[string]any{}
				c[idx] = next
			}
			cur = next
		default:
			return invalidf("filters: %q mixes a value and an object", key)
		}
	}
	return nil
}

// isIndex reports whether seg is an array index: digits, at most 999999.
func isIndex(seg string) bool {
	if seg == "" || len(seg) > 6 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

func nextIndex(s sparse) int {
	n := -1
	for i := range s {
		n = max(n, i)
	}
	return n + 1
}

// compact turns every sparse array into a list in index order, as JSON
// decoding would have given it.
func compact(node any) any {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			n[k] = compact(v)
		}
		return n
	case sparse:
		idx := make([]int, 0, len(n))
		for i := range n {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		list := make([]any, len(idx))
		for j, i := range idx {
			list[j] = compact(n[i])
		}
		return list
	}
	return node
}
