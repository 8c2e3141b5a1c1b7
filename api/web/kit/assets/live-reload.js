// Live status of a run without a framework: the page reloads itself every data-interval
// milliseconds unless someone is typing in it.
(() => {
  const ms = Number(document.currentScript.dataset.interval) || 5000;
  (function tick() {
    setTimeout(() => {
      const busy = document.activeElement && /INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName);
      if (busy) tick();
      else location.reload();
    }, ms);
  })();
})();
