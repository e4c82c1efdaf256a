package fetch

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// Errors an UnmarshalError wraps.
var (
	// ErrUnmarshalTarget: Unmarshal was given something other than a
	// non-nil pointer to a struct.
	ErrUnmarshalTarget = errors.New("fetch: Unmarshal needs a non-nil pointer to a struct")
	// ErrFieldType: a tagged field's type is not one Unmarshal fills.
	ErrFieldType = errors.New("fetch: unsupported field type")
	// ErrBadTag: a field's tags contradict each other (an attr on a
	// struct field, an empty attr).
	ErrBadTag = errors.New("fetch: bad extraction tag")
)

// UnmarshalError reports a field Unmarshal could not fill: a bad tag
// (wrapping ErrBadTag or a *SelectorError), a type it does not fill
// (ErrFieldType), or a value that does not convert to the field's type
// (wrapping the strconv or url error).
type UnmarshalError struct {
	// Type is the struct type, Field the field's name (dotted path for
	// nested structs); both "" for ErrUnmarshalTarget.
	Type, Field string
	// Selector is the field's selector tag.
	Selector string
	Err      error
}

func (e *UnmarshalError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("fetch: unmarshal %s.%s (selector %q): %v", e.Type, e.Field, e.Selector, e.Err)
}

func (e *UnmarshalError) Unwrap() error { return e.Err }

var urlType = reflect.TypeFor[url.URL]()

// Unmarshal fills the struct v points to from the elements under e, field
// by field, as their tags say:
//
//	type Product struct {
//		Name   string   `selector:"h1.name"`
//		Price  float64  `selector:".price" attr:"content"`
//		Image  *url.URL `selector:"img.main" attr:"src"`
//		Tags   []string `selector:"ul.tags li"`
//		Seller struct {
//			Name string `selector:".seller-name"`
//		} `selector:".seller"`
//	}
//
// The selector tag is a CSS selector matched under e ("." is e itself);
// fields without one are left alone. A field takes the Text of the first
// match, or its attribute attr. Strings, bools, integers, floats (the
// value trimmed; an empty value leaves the zero), url.URL (resolved
// against the page's base URL), structs (filled from the first match, as
// if Unmarshal were called on it), pointers to those (allocated only when
// something matched) and slices of those (one element per match) are
// filled. A field whose selector matches nothing keeps its value.
//
// Errors are *UnmarshalError; Unmarshal stops at the first. It does not
// panic on any page or any struct type. Unmarshal compiles each selector
// on every call: a few microseconds per field.
func Unmarshal(e *Element, v any) error {
	rv := reflect.ValueOf(v)
	if e == nil || rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return &UnmarshalError{Err: ErrUnmarshalTarget}
	}
	return unmarshalStruct(e, rv.Elem(), "", 0)
}

// maxNesting bounds nested structs: a self-referencing type through
// pointers or slices would otherwise recurse as deep as the page nests.
const maxNesting = 32

func unmarshalStruct(e *Element, sv reflect.Value, prefix string, depth int) error {
	st := sv.Type()
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		sel, ok := f.Tag.Lookup("selector")
		if !ok || !f.IsExported() {
			continue
		}
		attr, hasAttr := f.Tag.Lookup("attr")
		fail := func(err error) error {
			var ue *UnmarshalError
			if errors.As(err, &ue) && ue.Field != "" {
				return err // a nested field's error names its own path
			}
			return &UnmarshalError{Type: st.String(), Field: prefix + f.Name, Selector: sel, Err: err}
		}
		if hasAttr && attr == "" {
			return fail(fmt.Errorf("%w: empty attr", ErrBadTag))
		}
		ft := f.Type
		if !fillable(ft, hasAttr, 0) {
			if hasAttr && fillable(ft, false, 0) {
				return fail(fmt.Errorf("%w: attr on a struct field", ErrBadTag))
			}
			return fail(fmt.Errorf("%w: %s", ErrFieldType, ft))
		}
		var matches []*Element
		if sel == "." {
			matches = []*Element{e}
		} else {
			s, err := CompileSelector(sel)
			if err != nil {
				return fail(err)
			}
			if ft.Kind() == reflect.Slice {
				matches = e.Select(s)
			} else if m := e.SelectFirst(s); m != nil {
				matches = []*Element{m}
			}
		}
		if len(matches) == 0 {
			continue
		}
		fv := sv.Field(i)
		if depth >= maxNesting {
			return fail(fmt.Errorf("%w: structs nested deeper than %d", ErrFieldType, maxNesting))
		}
		if ft.Kind() == reflect.Slice {
			out := reflect.MakeSlice(ft, 0, len(matches))
			for _, m := range matches {
				ev := reflect.New(ft.Elem()).Elem()
				if err := fill(m, ev, attr, hasAttr, prefix+f.Name+"[]", depth); err != nil {
					return fail(err)
				}
				out = reflect.Append(out, ev)
			}
			fv.Set(out)
			continue
		}
		if err := fill(matches[0], fv, attr, hasAttr, prefix+f.Name, depth); err != nil {
			return fail(err)
		}
	}
	return nil
}

// fillable reports whether Unmarshal fills a field of type t (an element
// of a slice when inSlice > 0).
func fillable(t reflect.Type, hasAttr bool, inSlice int) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Struct:
		return t == urlType || !hasAttr
	case reflect.Pointer:
		return t.Elem().Kind() != reflect.Pointer && t.Elem().Kind() != reflect.Slice && fillable(t.Elem(), hasAttr, inSlice)
	case reflect.Slice:
		return inSlice == 0 && t.Elem().Kind() != reflect.Uint8 && fillable(t.Elem(), hasAttr, inSlice+1)
	}
	return false
}

// fill sets v from the element m.
func fill(m *Element, v reflect.Value, attr string, hasAttr bool, path string, depth int) error {
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := fill(m, p.Elem(), attr, hasAttr, path, depth); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	if t.Kind() == reflect.Struct && t != urlType {
		return unmarshalStruct(m, v, path+".", depth+1)
	}
	var s string
	if hasAttr {
		s = m.Attr(attr)
	} else {
		s = m.Text()
	}
	s = strings.TrimSpace(s)
	if t.Kind() == reflect.String {
		v.SetString(s)
		return nil
	}
	if s == "" {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(s, 10, t.Bits())
		if err != nil {
			return err
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, t.Bits())
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case reflect.Struct: // url.URL
		u, err := m.Resolve(s)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(*u))
	}
	return nil
}
