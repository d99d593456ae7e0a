# SPDX-License-Identifier: GPL-2.0
"""The report's SVG bar charts (standard library only)."""
import html
import re

from benchlib import configs
from benchlib.stats import fmt


def svg_bars(title, unit, better, rows):
    """rows: [(config, (median, min, max, n))]. Horizontal bars with min-max whiskers."""
    rows = [(c, s) for c, s in rows if s is not None]
    if not rows:
        return None
    left, right, top, bar_h, gap = 150, 110, 46, 22, 10
    width = 720
    plot_w = width - left - right
    height = top + len(rows) * (bar_h + gap) + 28
    vmax = max(s[2] for _, s in rows) or 1.0
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="14" font-weight="bold">%s</text>' % html.escape(title),
           '<text x="10" y="36" fill="#555">%s, %s is better; bar = median, whisker = min–max</text>'
           % (html.escape(unit), better)]
    y = top
    for c, (med, lo, hi, n) in rows:
        w = plot_w * med / vmax
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                   % (left - 8, y + bar_h * 0.7, html.escape(c)))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                   % (left, y, max(w, 1), bar_h, configs.color(c)))
        if n > 1:
            out.extend(_whisker(left + plot_w * lo / vmax, left + plot_w * hi / vmax, y, bar_h))
        out.append('<text x="%.1f" y="%d">%s</text>'
                   % (left + max(w, plot_w * hi / vmax) + 6, y + bar_h * 0.7, fmt(med)))
        y += bar_h + gap
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (left, top - 4, left, y - gap + 4))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _whisker(x0, x1, y, bar_h):
    ym = y + bar_h / 2
    out = ['<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (x0, ym, x1, ym)]
    for x in (x0, x1):
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>'
                   % (x, y + 5, x, y + bar_h - 5))
    return out


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60]
