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

  // On a phone the navigation folds behind a Menu button (shown only where a script runs:
  // without one, the navigation stays open and wraps).
  const menu = document.querySelector("header button.menu");
  const nav = document.getElementById("workspace-nav");
  if (menu && nav) {
    menu.hidden = false;
    document.documentElement.classList.add("folding-nav");
    menu.addEventListener("click", () => {
      const open = menu.getAttribute("aria-expanded") !== "true";
      menu.setAttribute("aria-expanded", String(open));
      nav.classList.toggle("open", open);
    });
  }

  // A copy button copies the text of the element it names (the readiness table as Markdown);
  // shown only where a script runs (without one, the text is there to select).
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    const source = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector(".copied");
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(source.textContent);
        if (status) status.textContent = "Copied.";
      } catch (error) {
        if (status) status.textContent = "Could not copy: select the text above.";
      }
    });
  });
});
