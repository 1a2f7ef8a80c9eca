// Reload the page while a run is pending (the server sets data-refresh only then).
(function () {
  var seconds = Number(document.body.dataset.refresh);
  if (seconds > 0) {
    setTimeout(function () { window.location.reload(); }, seconds * 1000);
  }
})();
