// The console's only script: a file chosen in a picker with data-fills="ID" is read into the text box ID, so a
// catalog file can be picked instead of pasted. Without JavaScript, pasting works the same.
document.addEventListener("DOMContentLoaded", () => {
  for (const picker of document.querySelectorAll("input[type=file][data-fills]")) {
    picker.addEventListener("change", async () => {
      const file = picker.files[0];
      if (file) document.getElementById(picker.dataset.fills).value = await file.text();
    });
  }
});
