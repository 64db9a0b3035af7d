// Opens one page of the web viewer in Debian's headless Chromium and reports what
// happened as one line of JSON on stdout: the final title, the message box, every
// console message and page error, the load and frame times, and (if asked) a PNG of
// the canvas. `tests/web/main.rs` runs it and decides what passes.
//
//   node drive.mjs '{"url": "...", "webgpu": true, "screenshot": "out.png"}'
import { chromium } from "playwright-core";

const config = JSON.parse(process.argv[2]);
const timeoutMs = config.timeoutMs ?? 240000;

// No outside network; WebGPU on SwiftShader's Vulkan when asked (without those flags
// this Chromium offers no adapter). The compositor must run on SwiftShader through
// ANGLE as well: otherwise the GPU process cannot allocate the canvas's swap chain
// images and the device is lost at the first present.
const args = [...(config.extraArgs ?? []),
  "--no-sandbox",
  "--disable-gpu-sandbox",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
];
if (config.webgpu) {
  args.push(
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-angle=swiftshader",
  );
}

const report = { console: [], pageErrors: [] };

// The viewer reports through the title: ready, or an error with its message.
async function waitForVerdict(page) {
  try {
    await page.waitForFunction(
      () => document.title === "bevy_splat: ready" || document.title.startsWith("bevy_splat: error"),
      null,
      { timeout: timeoutMs, polling: 100 },
    );
  } catch (error) {
    report.timedOut = true;
  }
}
const browser = await chromium.launch({
  executablePath: config.chromium ?? "/usr/bin/chromium",
  headless: true,
  args,
});
try {
  const page = await browser.newPage({
    viewport: { width: config.viewportWidth ?? 640, height: config.viewportHeight ?? 480 },
  });
  page.on("console", (message) => report.console.push({ type: message.type(), text: message.text() }));
  page.on("pageerror", (error) => report.pageErrors.push(String(error && error.stack ? error.stack : error)));
  page.on("crash", () => report.pageErrors.push("the page crashed"));

  const started = Date.now();
  await page.goto(config.url, { waitUntil: "load", timeout: timeoutMs });
  await waitForVerdict(page);
  report.readyMs = Date.now() - started;
  report.title = await page.title();
  report.message = await page.evaluate(() => {
    const box = document.getElementById("message");
    return box ? { visible: !box.hidden, text: box.textContent } : null;
  });

  if (report.title === "bevy_splat: ready" && config.drop) {
    // A file dropped onto the page, as the browser delivers one: a drop event whose
    // DataTransfer holds a File (its bytes fetched from the test server).
    await page.evaluate(async ({ url, name }) => {
      const bytes = await (await fetch(url)).arrayBuffer();
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], name));
      const drop = new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true });
      document.getElementById("bevy").dispatchEvent(drop);
    }, config.drop);
    await page.waitForFunction(() => document.title === "bevy_splat: loading", null, {
      timeout: 30000,
      polling: 50,
    });
    await waitForVerdict(page);
    report.title = await page.title();
  }

  if (report.title === "bevy_splat: ready") {
    if (config.screenshot) {
      // A clipped page screenshot, not the element's: an element screenshot first
      // waits for two animation frames with the same layout, and a frame drawn in
      // bands on the software adapter can take longer than its timeout.
      const box = await page.locator("#bevy").boundingBox();
      await page.screenshot({ path: config.screenshot, clip: box, timeout: 120000 });
    }
    if (config.frameSamples) {
      // Frame times as the viewer measured them (Bevy's smoothed frame time),
      // published on the body every second.
      const deadline = Date.now() + (config.frameWaitMs ?? 20000);
      while (Date.now() < deadline) {
        const frames = await page.evaluate(() => Number(document.body.dataset.frames ?? 0));
        if (frames >= config.frameSamples) break;
        await page.waitForTimeout(250);
      }
      report.frame = await page.evaluate(() => ({ ...document.body.dataset }));
    }
    report.title = await page.title();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
