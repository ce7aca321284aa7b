<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>k on cpu: AMD EPYC (2 cores)</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;max-width:1200px;color:#222}
h2{margin-top:36px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px}
.plots{display:flex;flex-wrap:wrap;gap:12px}
svg{background:#fff}
.frame{fill:none;stroke:#999}
.grid{stroke:#eee}
.tick{font-size:10px;fill:#555}
.label{font-size:11px;fill:#333}
.pt{fill:#3b75af;fill-opacity:.35}
.line{fill:none;stroke:#3b75af;stroke-width:1.5}
.best{fill:none;stroke:#c0392b;stroke-width:2}
.median{stroke:#888;stroke-width:2}
.bestmark{stroke:#111;stroke-width:2.5}
.base{fill:none;stroke:#e67e22;stroke-width:2}
.baseline{stroke:#e67e22;stroke-width:1.5;stroke-dasharray:5 4}
.sizes{fill:none;stroke:#c0392b;stroke-width:2}
.basesizes{fill:none;stroke:#e67e22;stroke-width:1.5;stroke-dasharray:5 4}
.warn{background:#fff3cd;border:1px solid #e0c36b;padding:6px 10px}
td.noisy{background:#fde2e1}
</style>
</head>
<body>
<h1>k on cpu: AMD EPYC (2 cores)</h1>
<p>2 trials in 1 section, measured 2026-12-06T08:35:07Z to 2026-12-06T08:35:07Z. Times are medians of each trial's samples.</p>
<h2 id="s0">k &mdash; N = 64</h2>
<p>cpu: AMD EPYC (2 cores) &middot; 2 trials: 2 ok</p>
<h3>Fastest configs</h3>
<p>The best is the fastest of the confirmed configs: each was measured again side by side with the others.</p>
<table><tr><th>rank</th><th>median us</th><th>min us</th><th>noise</th><th>max abs diff</th><th>config</th></tr>
<tr><td class="num">1</td><td class="num">0.050</td><td class="num">0.049</td><td class="num">0.3%</td><td class="num">0</td><td><code>{KIND: 0}</code> (best) (confirmed)</td></tr>
<tr><td class="num">2</td><td class="num">0.050</td><td class="num">0.049</td><td class="num">0.2%</td><td class="num">0</td><td><code>{KIND: 1}</code> (confirmed)</td></tr>
</table>
<div class="plots"><svg xmlns="http://www.w3.org/2000/svg" width="560" height="300" viewBox="0 0 560 300" role="img"><title>every ok config&#39;s median time, fastest first; the default ringed</title><rect class="frame" x="58" y="10" width="490" height="250"/><line class="grid" x1="58" x2="548" y1="213.2" y2="213.2"/><text class="tick" x="54" y="217.2" text-anchor="end">0.04952</text><line class="grid" x1="58" x2="548" y1="155.0" y2="155.0"/><text class="tick" x="54" y="159.0" text-anchor="end">0.04954</text><line class="grid" x1="58" x2="548" y1="96.8" y2="96.8"/><text class="tick" x="54" y="100.8" text-anchor="end">0.04956</text><line class="grid" x1="58" x2="548" y1="38.6" y2="38.6"/><text class="tick" x="54" y="42.6" text-anchor="end">0.04958</text><text class="tick" x="58.0" y="274" text-anchor="middle">0.5</text><text class="tick" x="180.5" y="274" text-anchor="middle">1</text><text class="tick" x="303.0" y="274" text-anchor="middle">1.5</text><text class="tick" x="425.5" y="274" text-anchor="middle">2</text><text class="tick" x="548.0" y="274" text-anchor="middle">2.5</text><text class="label" x="303.0" y="294" text-anchor="middle">rank</text><text class="label" transform="translate(14,135.0) rotate(-90)" text-anchor="middle">median time (us)</text><polyline class="line" points="180.5,248.6 425.5,21.4 "/><circle class="pt" cx="180.5" cy="248.6" r="2.5"/><circle class="pt" cx="425.5" cy="21.4" r="2.5"/></svg><svg xmlns="http://www.w3.org/2000/svg" width="560" height="300" viewBox="0 0 560 300" role="img"><title>the fastest time found against the number of evaluations; dashed: the default&#39;s time</title><rect class="frame" x="58" y="10" width="490" height="250"/><line class="grid" x1="58" x2="548" y1="213.2" y2="213.2"/><text class="tick" x="54" y="217.2" text-anchor="end">0.04952</text><line class="grid" x1="58" x2="548" y1="155.0" y2="155.0"/><text class="tick" x="54" y="159.0" text-anchor="end">0.04954</text><line class="grid" x1="58" x2="548" y1="96.8" y2="96.8"/><text class="tick" x="54" y="100.8" text-anchor="end">0.04956</text><line class="grid" x1="58" x2="548" y1="38.6" y2="38.6"/><text class="tick" x="54" y="42.6" text-anchor="end">0.04958</text><text class="tick" x="58.0" y="274" text-anchor="middle">0.5</text><text class="tick" x="180.5" y="274" text-anchor="middle">1</text><text class="tick" x="303.0" y="274" text-anchor="middle">1.5</text><text class="tick" x="425.5" y="274" text-anchor="middle">2</text><text class="tick" x="548.0" y="274" text-anchor="middle">2.5</text><text class="label" x="303.0" y="294" text-anchor="middle">evaluations</text><text class="label" transform="translate(14,135.0) rotate(-90)" text-anchor="middle">median time (us)</text><circle class="pt" cx="180.5" cy="248.6" r="2"/><circle class="pt" cx="425.5" cy="21.4" r="2"/><polyline class="best" points="180.5,248.6 425.5,248.6 "/></svg></div>
<p>Left: the ok configs by time, the default ringed in orange. Right: each ok trial in evaluation order, in red the fastest so far, dashed orange the default's time. Noise is the half-width of the median's 95% confidence interval, relative to the median.</p>
<h3>Parameters</h3>
<p>Per value: the best and the median time of the ok trials that set it (a value whose every trial was cut short by the early stop: of their few samples, marked &ge;, a lower bound). Spread: the slowest value's best over the fastest value's best, largest first.</p>
<table><tr><th>parameter</th><th>spread</th><th>value: best us / median us (ok trials)</th></tr>
<tr><td><code>KIND</code></td><td class="num">1.00x</td><td><code>0</code>: 0.050 / 0.050 (1) &nbsp; <code>1</code>: 0.050 / 0.050 (1)</td></tr>
</table>
<div class="plots"><svg xmlns="http://www.w3.org/2000/svg" width="250" height="300" viewBox="0 0 250 300" role="img"><title>KIND: each value&#39;s ok trials</title><rect class="frame" x="58" y="10" width="180" height="250"/><line class="grid" x1="58" x2="238" y1="213.2" y2="213.2"/><text class="tick" x="54" y="217.2" text-anchor="end">0.04952</text><line class="grid" x1="58" x2="238" y1="155.0" y2="155.0"/><text class="tick" x="54" y="159.0" text-anchor="end">0.04954</text><line class="grid" x1="58" x2="238" y1="96.8" y2="96.8"/><text class="tick" x="54" y="100.8" text-anchor="end">0.04956</text><line class="grid" x1="58" x2="238" y1="38.6" y2="38.6"/><text class="tick" x="54" y="42.6" text-anchor="end">0.04958</text><text class="tick" x="103.0" y="274" text-anchor="middle">0</text><text class="tick" x="193.0" y="274" text-anchor="middle">1</text><text class="label" x="148.0" y="294" text-anchor="middle">KIND</text><text class="label" transform="translate(14,135.0) rotate(-90)" text-anchor="middle">median time (us)</text><circle class="pt" cx="80.5" cy="248.6" r="2"/><line class="median" x1="71.5" x2="134.5" y1="248.6" y2="248.6"/><line class="bestmark" x1="71.5" x2="134.5" y1="248.6" y2="248.6"/><circle class="pt" cx="170.5" cy="21.4" r="2"/><line class="median" x1="161.5" x2="224.5" y1="21.4" y2="21.4"/><line class="bestmark" x1="161.5" x2="224.5" y1="21.4" y2="21.4"/></svg></div>
<p>Dots: the trials of each value (at most 400 per value, spread over its times); black: its best; grey: its median.</p>
</body>
</html>
