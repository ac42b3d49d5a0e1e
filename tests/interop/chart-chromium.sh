#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The boot chart (vmmtrace report --chart) opened by a browser that is not
# ours: Debian's Chromium, headless. The chart of tests/unit/graph-fixture.h's
# boot, inlined into a page whose script (the test's, not the chart's: the
# chart has none) measures what Chromium laid out, read back with
# --dump-dom: every stage's span and every stage label and lane label
# drawn with a size, inside the picture, and the hover titles there. Then a
# screenshot of the chart alone, its pixels read back (a PNG decoder of
# Python's standard library): each stage's fill colour is on screen where
# the chart says its span is, and the lane labels' column has text.
. "$(dirname "$0")/../lib.sh"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "##################################################################"
	echo "SKIP: $(basename "$0"): chromium is absent (apt-get install chromium); NOT RUN"
	echo "##################################################################"
	exit 77
fi
FIXTURE=$TOP/build/tests/unit/test-trace-returns
require_file "$VMMTRACE"
require_file "$FIXTURE"
d=$TMPD
"$FIXTURE" --fixture "$d" || { fail "test-trace-returns --fixture failed"; finish; }
"$VMMTRACE" report "$d/graph.raw" --chart "$d/chart.svg"
check "the chart is written" test -s "$d/chart.svg"
# Chromium wants a home it can write, and no sandbox when run as root.
export HOME=$d/home
mkdir -p "$HOME"
chrome() { timeout -k 5 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars "$@" 2>>"$d/chromium.err"; }

{
	echo '<!DOCTYPE html><html><body style="margin:0">'
	sed '1{/^<?xml/d}' "$d/chart.svg"
	cat <<'JS'
<pre id="result"></pre>
<script>
const svg = document.querySelector("svg"), out = [], box = svg.getBoundingClientRect();
const inside = r => r.width > 0 && r.height > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 &&
	r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
for (const e of svg.querySelectorAll("rect.stage"))
	out.push("stage " + e.dataset.stage + " " + (inside(e.getBoundingClientRect()) ? "drawn" : "missing") +
		 " title=" + (e.querySelector("title") ? "yes" : "no"));
for (const e of svg.querySelectorAll("text.stage-label"))
	out.push("stage-label " + e.textContent + " " + (inside(e.getBoundingClientRect()) ? "drawn" : "missing"));
for (const e of svg.querySelectorAll("text.lane-label"))
	out.push("lane-label " + e.textContent + " " + (inside(e.getBoundingClientRect()) ? "drawn" : "missing"));
out.push("calls " + svg.querySelectorAll("rect.call").length + " vm " + svg.querySelectorAll("rect.vm").length);
document.getElementById("result").textContent = out.join("\n");
</script></body></html>
JS
} >"$d/page.html"
chrome --dump-dom "file://$d/page.html" >"$d/dom.html"
sed -n '/<pre id="result">/,/<\/pre>/p' "$d/dom.html" | sed 's/<[^>]*>//g' | grep -v '^$' >"$d/result"
sed 's/^/INFO: /' "$d/result" | head -n 40
check "Chromium lays out the ten stage spans, each with its hover title" \
	eval "[ \$(grep -c '^stage .* drawn title=yes\$' '$d/result') = 10 ] && ! grep -q '^stage .* missing' '$d/result'"
check "Chromium lays out the stage labels (start_kernel, kernel_init ...), inside the picture" \
	eval "grep -qx 'stage-label start_kernel drawn' '$d/result' && grep -qx 'stage-label kernel_init drawn' '$d/result' &&
	      ! grep -q '^stage-label .* missing' '$d/result'"
check "Chromium lays out a label per lane: vCPU 0, vCPU 1, init-1, sched-2, late-3" \
	eval "for l in 'vCPU 0' 'vCPU 1' init-1 sched-2 late-3; do grep -qx \"lane-label \$l drawn\" '$d/result' || exit 1; done"
check "the calls and the VM event ticks are in the page Chromium built" grep -qE '^calls [1-9][0-9]* vm [1-9]' "$d/result"

chrome --screenshot="$d/shot.png" --window-size=1400,700 "file://$d/chart.svg" >/dev/null
check "a screenshot of the chart alone" test -s "$d/shot.png"
check "the screenshot's pixels: each stage's colour where its span is; text in the lanes' label column" \
	python3 - "$d/shot.png" "$d/chart.svg" <<'PY'
import re, struct, sys, zlib

def png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, i = zlib.decompress(idat), [], bytearray(w * bpp), 0
    for y in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + w * bpp])
        i += 1 + w * bpp
        for x in range(len(line)):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line); prev = line
    return w, h, bpp, rows

w, h, bpp, rows = png(sys.argv[1])
svg = open(sys.argv[2]).read()
ok = 0
spans = re.findall(r'<rect class="stage" data-stage="([^"]+)"[^>]* x="([0-9.]+)" y="([0-9]+)" width="([0-9.]+)" height="([0-9]+)" fill="#([0-9a-f]{6})"', svg)
for name, x, y, wd, ht, col in spans:
    x, y, wd, ht = float(x), int(y), float(wd), int(ht)
    want = bytes.fromhex(col)
    # The middle of the span's row, across its width, less its edges and any label.
    yy = y + 3
    hits = sum(1 for xx in range(int(x) + 2, int(x + wd) - 1)
               if 0 <= xx < w and yy < h and all(abs(rows[yy][xx * bpp + k] - want[k]) <= 2 for k in range(3)))
    print("INFO: stage %s: %d of %d pixels of #%s" % (name, hits, max(int(wd) - 3, 0), col))
    ok += hits > 0 or wd < 4
assert ok == len(spans) == 10, (ok, len(spans))
# Lane labels: dark pixels in the label column (x 8..150) of the lanes.
dark = sum(1 for yy in range(130, min(h, 300)) for xx in range(8, 150)
           if sum(rows[yy][xx * bpp:xx * bpp + 3]) < 200)
print("INFO: %d dark pixels in the lanes' label column" % dark)
assert dark > 100
PY
finish
