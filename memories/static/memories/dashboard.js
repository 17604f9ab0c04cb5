// The workspace switcher goes to the chosen workspace as soon as one is chosen (without
// JavaScript, its Go button does the same). A file, not an inline handler: the pages'
// Content-Security-Policy allows no inline script.
document.addEventListener("DOMContentLoaded", () => {
  const select = document.querySelector("form.switcher select[name=ws]");
  if (select) {
    select.addEventListener("change", () => {
      window.location = "/w/" + encodeURIComponent(select.value) + "/";
    });
  }
});
