// Draws the usage charts of /account and the admin's usage dashboard with Chart.js (vendored beside this file):
// each <canvas data-chart="ID"> from the JSON in <script id="ID" type="application/json">, which the server
// fills ({days: [...], series: [{label, costs: [one per day]}]}). No inline script, so a page's CSP may say
// script-src 'self'.
(function () {
  "use strict";
  var COLORS = ["#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#06b6d4", "#ec4899", "#84cc16", "#9ca3af"];

  function usd(value) {
    return "$" + (Math.abs(value) >= 0.01 || value === 0 ? value.toFixed(2) : value.toFixed(4));
  }

  function draw(canvas) {
    var spec = JSON.parse(document.getElementById(canvas.dataset.chart).textContent);
    var stacked = spec.series.length > 1;
    new Chart(canvas, {
      type: "bar",
      data: {
        labels: spec.days,
        datasets: spec.series.map(function (series, index) {
          var color = COLORS[index % COLORS.length];
          return {label: series.label, data: series.costs, backgroundColor: color, borderColor: color};
        }),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: {stacked: stacked, ticks: {maxRotation: 0, autoSkip: true}},
          y: {stacked: stacked, beginAtZero: true, ticks: {callback: usd}},
        },
        plugins: {
          legend: {display: stacked, position: "bottom"},
          tooltip: {callbacks: {label: function (item) { return item.dataset.label + ": " + usd(item.parsed.y); }}},
        },
      },
    });
  }

  document.querySelectorAll("canvas[data-chart]").forEach(draw);
})();
