/* utf8.c — see utf8.h. */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static bool in(unsigned char b, unsigned char lo, unsigned char hi) { return b >= lo && b <= hi; }

int cg_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0)
        return 0;
    unsigned char b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    /* Table 3-7: the lead byte fixes the length and the range of the second
     * byte (which is what excludes overlongs, surrogates and > U+10FFFF);
     * every later byte is 80..BF. */
    int len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (in(b, 0xC2, 0xDF))
        len = 2;
    else if (in(b, 0xE0, 0xEF))
        len = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    else if (in(b, 0xF0, 0xF4))
        len = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (n < (size_t)len || !in(s[1], lo, hi))
        return 0;
    for (int i = 2; i < len; i++)
        if (!in(s[i], 0x80, 0xBF))
            return 0;
    uint32_t v = b & (0x7Fu >> len);
    for (int i = 1; i < len; i++)
        v = v << 6 | (s[i] & 0x3Fu);
    *cp = v;
    return len;
}

char *cg_utf8_clean(const char *s)
{
    if (!s)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    char *out = malloc(4 * n + 1); /* each byte grows to at most "\xNN" */
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int len = cg_utf8_decode(u + i, n - i, &cp);
        if (len > 0) {
            memcpy(out + o, u + i, (size_t)len);
            o += (size_t)len;
            i += (size_t)len;
        } else {
            static const char hex[] = "0123456789ABCDEF";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[u[i] >> 4];
            out[o++] = hex[u[i] & 15];
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

bool cg_utf8_xml_forbidden(uint32_t cp)
{
    if (cp < 0x20)
        return cp != 0x09 && cp != 0x0A && cp != 0x0D;
    return cp == 0xFFFE || cp == 0xFFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF;
}
