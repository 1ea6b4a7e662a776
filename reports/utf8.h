/* utf8.h — text that is safe to put in a report.
 *
 * Report strings come from places the tool does not control: case files,
 * paths, plugin error messages, OS error strings. JSON and XML both require
 * UTF-8, so every string a report writer emits goes through here first.
 *
 * The rule, in one place: a byte that does not begin a well-formed UTF-8
 * sequence (Unicode 15, table 3-7: no overlongs, no surrogates, nothing past
 * U+10FFFF) is written as the four ASCII characters "\xNN" (NN its value in
 * upper-case hex), so the reader still sees which byte it was. XML 1.0 also
 * forbids the C0 controls other than TAB, LF and CR, even as character
 * references, and U+FFFE and U+FFFF: an XML writer spells those "\xNN" and
 * "\uFFFE" / "\uFFFF" the same way (cg_utf8_xml_forbidden says which). */
#ifndef CG_UTF8_H
#define CG_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1..4) of the well-formed UTF-8 sequence at s[0..n), with its
 * code point in *cp; 0 when s[0] does not begin one (or n is 0). */
int cg_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* A malloc'd copy of s with every byte that is not part of a well-formed
 * sequence replaced by "\xNN". NULL when s is NULL or on OOM; the caller
 * frees it. */
char *cg_utf8_clean(const char *s);

/* True when XML 1.0 does not allow code point cp in a document at all. */
bool cg_utf8_xml_forbidden(uint32_t cp);

#endif
