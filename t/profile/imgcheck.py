#!/usr/bin/python3
"""Read a chart drawn by slurm-pin plot, for t6020-plot.t.

  imgcheck.py IMAGE MANPAGE

Decodes IMAGE (PNG with PIL, SVG as XML) and prints one JSON object of
what is in it, found in the image itself:
  format        "png" or "svg"
  width, height the size (SVG: of its viewBox, and of its width and
                height attributes, which must agree)
  frame         [x0, y0, x1, y1]: the plot area, the box of the long black
                lines of the axes (of all panels)
  colours       the palette colours present inside the plot area, in
                palette order; the legend, outside it, does not count
  bars          the Gantt chart's bars: SVG, the filled polygons inside
                the plot area; PNG, the runs of pixel rows inside it that
                have a bar colour (bars are apart when rows are 4 pixels
                or more)
  texts         (SVG) the text of every <text> element
  heat          the heat map shades present inside the plot area (the
                chart of many CPUs, the Gantt chart of many processes)
  heat_rows     (SVG) the rows of the heat map: distinct vertical
                centres of its shaded rectangles
  strokes       (SVG) for each palette colour, the lines of that colour
                inside the plot area: a series broken by gaps is more
                than one
  marks         (SVG) for each palette colour, its marks (a cross, the
                incomplete samples of the memory chart)
The palette is read from MANPAGE (slurm-pin-plot(1)), between the
comment lines 'palette-begin' and 'palette-end', the heat map's shades
between 'heat-begin' and 'heat-end': the colours the command
documents, so a drift between the code and its manual fails.
A colour counts in a PNG when at least MIN_PIXELS pixels have exactly it.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

MIN_PIXELS = 6


def palette(manpage, what="palette"):
    text = open(manpage).read()
    m = re.search(what + r"-begin(.*?)" + what + "-end", text, re.S)
    if not m:
        sys.exit("imgcheck: no %s in %s" % (what, manpage))
    return [c.upper() for c in re.findall(r"#[0-9A-Fa-f]{6}", m.group(1))]


def dark_grey(p):
    r, g, b = p[:3]
    return max(r, g, b) < 160 and max(r, g, b) - min(r, g, b) < 12


def longest_run(flags):
    best = run = 0
    for f in flags:
        run = run + 1 if f else 0
        best = max(best, run)
    return best


def png(path, pal, heat):
    from PIL import Image
    im = Image.open(path)
    im.load()
    w, h = im.size
    data = im.convert("RGB").tobytes()
    pix = [data[i:i + 3] for i in range(0, len(data), 3)]   # row major
    dark = [dark_grey(p) for p in pix]
    # the axes: rows (columns) with a dark grey run over 30% (25%) of the
    # image; text and dashed marks have no such run
    rows = [y for y in range(h)
            if longest_run(dark[y * w:(y + 1) * w]) >= 0.3 * w]
    cols = [x for x in range(w)
            if longest_run(dark[x::w]) >= 0.25 * h]
    out = {"format": "png", "width": w, "height": h, "mode": im.mode}
    if not rows or not cols:
        out.update({"frame": None, "colours": [], "bars": 0})
        return out
    x0, x1, y0, y1 = min(cols), max(cols), min(rows), max(rows)
    index = {bytes.fromhex(c[1:]): c for c in pal + heat}
    count = {}
    bar_colours = {bytes.fromhex(c[1:]) for c in pal[:8] + pal[-1:]}
    bar_rows = []
    for y in range(y0 + 1, y1):
        has_bar = False
        for p in pix[y * w + x0 + 1:y * w + x1]:
            if p in index:
                count[p] = count.get(p, 0) + 1
                has_bar = has_bar or p in bar_colours
        bar_rows.append(has_bar)
    bars = sum(1 for i, f in enumerate(bar_rows)
               if f and (i == 0 or not bar_rows[i - 1]))
    found = {index[p] for p, n in count.items() if n >= MIN_PIXELS}
    out.update({"frame": [x0, y0, x1, y1],
                "colours": [c for c in pal if c in found], "bars": bars,
                "heat": [c for c in heat if c in found]})
    return out


def points(el):
    nums = [float(v) for v in re.split(r"[ ,]+", el.get("points", "").strip())
            if v]
    return list(zip(nums[0::2], nums[1::2]))


def svg(path, pal, heat):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    vb = [float(v) for v in root.get("viewBox").split()]
    aw = float(re.match(r"[0-9.]+", root.get("width")).group(0))
    ah = float(re.match(r"[0-9.]+", root.get("height")).group(0))
    out = {"format": "svg", "width": vb[2], "height": vb[3],
           "width_attr": aw, "height_attr": ah}
    lines = list(root.iter(ns + "polyline"))
    hs, vs = [], []
    for el in lines:
        if (el.get("stroke") or "").upper() != "#000000":
            continue
        pts = points(el)
        for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
            if abs(ya - yb) < 0.01 and abs(xa - xb) >= 0.3 * vb[2]:
                hs.append(ya)
            if abs(xa - xb) < 0.01 and abs(ya - yb) >= 0.25 * vb[3]:
                vs.append(xa)
    out["texts"] = ["".join(t.itertext()) for t in root.iter(ns + "text")]
    if not hs or not vs:
        out.update({"frame": None, "colours": [], "bars": 0})
        return out
    x0, x1, y0, y1 = min(vs), max(vs), min(hs), max(hs)
    found, bars, hfound, hrows, strokes = set(), 0, set(), set(), {}
    for el in lines:
        pts = points(el)
        if not pts or not all(x0 - 0.5 <= x <= x1 + 0.5
                              and y0 - 0.5 <= y <= y1 + 0.5
                              for x, y in pts):
            continue
        fill = (el.get("fill") or "none").upper()
        stroke = (el.get("stroke") or "").upper()
        if fill != "NONE" and fill in pal:
            found.add(fill)
            bars += 1
        elif fill != "NONE" and fill in heat:
            hfound.add(fill)
            ys = [y for _, y in pts]
            hrows.add(round((min(ys) + max(ys)) / 2, 1))
        elif stroke in pal:
            found.add(stroke)
            strokes[stroke] = strokes.get(stroke, 0) + 1
    marks = {}
    for t in root.iter(ns + "text"):
        fill = (t.get("fill") or "").upper()
        if fill in pal and "".join(t.itertext()) == "\u00d7":
            marks[fill] = marks.get(fill, 0) + 1
    out.update({"frame": [x0, y0, x1, y1],
                "colours": [c for c in pal if c in found], "bars": bars,
                "heat": [c for c in heat if c in hfound],
                "heat_rows": len(hrows), "strokes": strokes,
                "marks": marks})
    return out


def main():
    path, manpage = sys.argv[1:3]
    pal = palette(manpage)
    heat = palette(manpage, "heat")
    with open(path, "rb") as f:
        head = f.read(8)
    out = (png(path, pal, heat) if head.startswith(b"\x89PNG")
           else svg(path, pal, heat))
    print(json.dumps(out))


main()
