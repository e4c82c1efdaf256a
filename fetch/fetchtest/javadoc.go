package fetchtest

import (
	"bytes"
	"html"
)

// Javadoc is the label of the host that serves an old-style javadoc site
// (Config.Javadoc): seven pages whose navigation bars write the "All
// Classes" link twice, once from a script (document.writeln) and once
// inside <NOSCRIPT>, as javadoc 1.6 did. JavadocNoscriptOnly lists the
// pages only the <NOSCRIPT> link leads to.
const Javadoc = "javadoc"

// javadocPage is one page of the Javadoc host and its links, relative to
// the page, in document order.
type javadocPage struct {
	path, title string
	links       []javadocLink
}

// javadocLink is a link of a javadoc page; noscript ones sit inside
// <NOSCRIPT>, with a script writing the same anchor before them.
type javadocLink struct {
	href, text string
	noscript   bool
}

var javadocPages = []javadocPage{
	{"/", "Example API", []javadocLink{
		{"api/overview-summary.html", "API documentation", false},
	}},
	{"/api/overview-summary.html", "Overview", []javadocLink{
		{"org/example/lang/package-summary.html", "org.example.lang", false},
		{"allclasses-noframe.html", "All Classes", true},
	}},
	{"/api/org/example/lang/package-summary.html", "org.example.lang", []javadocLink{
		{"../../../overview-summary.html", "Overview", false},
		{"StringUtils.html", "StringUtils", false},
		{"Validate.html", "Validate", false},
		{"../../../allclasses-noframe.html", "All Classes", true},
	}},
	{"/api/org/example/lang/StringUtils.html", "StringUtils", []javadocLink{
		{"package-summary.html", "Package", false},
		{"Validate.html", "NEXT CLASS", false},
		{"../../../allclasses-noframe.html", "All Classes", true},
	}},
	{"/api/org/example/lang/Validate.html", "Validate", []javadocLink{
		{"package-summary.html", "Package", false},
		{"StringUtils.html", "PREV CLASS", false},
		{"../../../allclasses-noframe.html", "All Classes", true},
	}},
	// Linked only from inside <NOSCRIPT>.
	{"/api/allclasses-noframe.html", "All Classes", []javadocLink{
		{"org/example/lang/CharUtils.html", "CharUtils", false},
		{"org/example/lang/StringUtils.html", "StringUtils", false},
		{"org/example/lang/Validate.html", "Validate", false},
	}},
	// Linked only from the page above.
	{"/api/org/example/lang/CharUtils.html", "CharUtils", []javadocLink{
		{"package-summary.html", "Package", false},
		{"../../../allclasses-noframe.html", "All Classes", true},
	}},
}

// JavadocNoscriptOnly returns the paths of the Javadoc host's pages that
// only the links inside <NOSCRIPT> lead to: a parser that reads <noscript>
// as raw text, as browsers running scripts do, never finds them.
func JavadocNoscriptOnly() []string {
	return []string{"/api/allclasses-noframe.html", "/api/org/example/lang/CharUtils.html"}
}

// javadocRoute returns the index of the Javadoc page at path, or -1.
func javadocRoute(path string) int {
	for j, p := range javadocPages {
		if p.path == path {
			return j
		}
	}
	return -1
}

// javadocLinks returns the links of Javadoc page j as a parser with
// scripting disabled sees them: the <NOSCRIPT> ones included, the ones the
// scripts would write not.
func javadocLinks(j int) []link {
	var out []link
	for _, l := range javadocPages[j].links {
		out = append(out, link{l.href, l.text})
	}
	return out
}

// renderJavadoc writes Javadoc page j in the markup of javadoc 1.6:
// upper-case tags, a navigation bar in tables, and for each noscript link
// a script writing the anchor followed by the same anchor in <NOSCRIPT>.
func renderJavadoc(b *bytes.Buffer, j int) {
	p := javadocPages[j]
	title := html.EscapeString(p.title)
	b.WriteString("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\" \"http://www.w3.org/TR/html4/loose.dtd\">\n<!--NewPage-->\n<HTML>\n<HEAD>\n<TITLE>\n")
	b.WriteString(title)
	b.WriteString("\n</TITLE>\n<SCRIPT type=\"text/javascript\">\nfunction windowTitle()\n{\n    parent.document.title=\"")
	b.WriteString(title)
	b.WriteString("\";\n}\n</SCRIPT>\n<NOSCRIPT>\n</NOSCRIPT>\n</HEAD>\n<BODY BGCOLOR=\"white\" onload=\"windowTitle();\">\n<HR>\n")
	b.WriteString("<TABLE BORDER=\"0\" WIDTH=\"100%\" CELLPADDING=\"1\" CELLSPACING=\"0\" SUMMARY=\"\">\n<TR>\n")
	for _, l := range p.links {
		href := html.EscapeString(l.href)
		text := html.EscapeString(l.text)
		b.WriteString("<TD BGCOLOR=\"#EEEEFF\" CLASS=\"NavBarCell1\">")
		if !l.noscript {
			b.WriteString("<A HREF=\"" + href + "\"><FONT CLASS=\"NavBarFont1\"><B>" + text + "</B></FONT></A>&nbsp;</TD>\n")
			continue
		}
		b.WriteString("<SCRIPT type=\"text/javascript\">\n  <!--\n  if(window==top) {\n    document.writeln('<A HREF=\"")
		b.WriteString(href)
		b.WriteString("\"><B>" + text + "</B></A>');\n  }\n  //-->\n</SCRIPT>\n<NOSCRIPT>\n  <A HREF=\"")
		b.WriteString(href + "\"><B>" + text + "</B></A>\n</NOSCRIPT>\n</TD>\n")
	}
	b.WriteString("</TR>\n</TABLE>\n<HR>\n<H2>\n")
	b.WriteString(title)
	b.WriteString("</H2>\n<P>\nOperations on <CODE>String</CODE> that are <CODE>null</CODE> safe.\n<P>\n<HR>\nCopyright &#169; 2001-2013 Example. All Rights Reserved.\n</BODY>\n</HTML>\n")
}
