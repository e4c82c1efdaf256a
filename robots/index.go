package robots

import "strings"

// indexMin is the number of rules from which a group gets a prefix index:
// below it, trying the rules in order of precedence is as fast.
const indexMin = 12

// node is a node of a radix tree over the first literal segments of a group's
// rules (the part of each pattern before its first '*'). A rule can only match
// a path that starts with its first segment, so walking the path down the tree
// visits exactly the rules worth trying: O(len(path)) instead of O(rules).
type node struct {
	label    string  // edge label from the parent
	firsts   string  // first byte of each child's label, for one IndexByte
	children []*node // distinct first label bytes, in the order of firsts
	rules    []int32 // indexes into group.rules of rules whose first segment ends here
}

func buildIndex(rules []rule) *node {
	root := &node{}
	for i := range rules {
		root.insert(rules[i].segs[0], int32(i))
	}
	return root
}

func (n *node) insert(s string, idx int32) {
	for {
		if s == "" {
			n.rules = append(n.rules, idx)
			return
		}
		var child *node
		if i := strings.IndexByte(n.firsts, s[0]); i >= 0 {
			child = n.children[i]
		}
		if child == nil {
			n.children = append(n.children, &node{label: s, rules: []int32{idx}})
			n.firsts += s[:1]
			return
		}
		common := 0
		for common < len(child.label) && common < len(s) && child.label[common] == s[common] {
			common++
		}
		if common < len(child.label) {
			// Split the edge: child keeps the tail of its label below a new
			// node holding the common part.
			mid := &node{label: child.label[:common], children: []*node{child}}
			child.label = child.label[common:]
			mid.firsts = child.label[:1]
			for i, c := range n.children {
				if c == mid.children[0] {
					n.children[i] = mid
				}
			}
			child = mid
		}
		n, s = child, s[common:]
	}
}

// lookup returns the index of the first rule (in order of precedence) that
// matches the canonical path p, or -1.
func (g *group) lookup(p string) int {
	best := -1
	rest := p
	end := int16(-2) // matches no rule's last
	if p != "" {
		end = int16(p[len(p)-1])
	}
	for n := g.index; ; {
		for _, i := range n.rules {
			if best >= 0 && int(i) >= best {
				continue
			}
			if ru := &g.rules[i]; (ru.last < 0 || ru.last == end) && ru.match(p) {
				best = int(i)
			}
		}
		if rest == "" {
			return best
		}
		// Children are few: a plain loop beats IndexByte's call.
		i, c := 0, rest[0]
		for i < len(n.firsts) && n.firsts[i] != c {
			i++
		}
		if i == len(n.firsts) {
			return best
		}
		next := n.children[i]
		if !strings.HasPrefix(rest, next.label) {
			return best
		}
		rest = rest[len(next.label):]
		n = next
	}
}
