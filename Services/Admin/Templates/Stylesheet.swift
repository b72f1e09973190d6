/// The site's one stylesheet, served at /assets/admin.css (the content security policy allows no inline styles).
enum Stylesheet {
    static let css = """
        :root { --teal: #006666; --gold: #c9a227; --ink: #1d2a2a; --muted: #5b6b6b; --line: #d5dede; --error: #b00020; --bg: #f6f8f8; }
        * { box-sizing: border-box; }
        [hidden] { display: none !important; }
        body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
        header.site { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .6rem 1.2rem; background: var(--teal); color: #fff; }
        header.site a { color: #fff; }
        .brand { font-weight: 700; font-size: 1.25rem; text-decoration: none; }
        /* A light gold: var(--gold) on teal is 2.8:1, under WCAG's 4.5:1 for text this size. */
        .brand span { color: #f2d675; font-weight: 400; }
        .skip-link { position: absolute; left: -999rem; top: .5rem; z-index: 1000; background: #fff; color: var(--teal); padding: .4rem .8rem; }
        .skip-link:focus { left: 1rem; }
        main:focus { outline: none; }
        nav.main ul { display: flex; flex-wrap: wrap; gap: .9rem; list-style: none; margin: 0; padding: 0; }
        .account { margin-left: auto; display: flex; gap: .8rem; align-items: center; }
        .who { opacity: .85; font-size: .9rem; }
        main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.2rem 3rem; }
        .breadcrumbs { font-size: .9rem; color: var(--muted); margin-bottom: .5rem; }
        h1 { margin: .3rem 0 1rem; font-size: 1.6rem; }
        h2 { font-size: 1.2rem; margin: 1.6rem 0 .6rem; }
        table { border-collapse: collapse; width: 100%; background: #fff; }
        th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        td, dd { overflow-wrap: anywhere; }
        th { background: #eaf0f0; font-weight: 600; }
        .field { margin: 0 0 .9rem; }
        .field label { display: block; font-weight: 600; margin-bottom: .2rem; }
        .field.checkbox label { display: inline; font-weight: 400; }
        fieldset.days { border: 0; padding: 0; margin: 0 0 .9rem; }
        .day-boxes { display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
        .day-boxes label { margin-left: .25rem; }
        input[type=text], input[type=email], input[type=password], input[type=url], input[type=tel], input[type=number], textarea, select {
            width: 100%; max-width: 40rem; padding: .45rem; border: 1px solid #9aa; border-radius: 4px; font: inherit; background: #fff; }
        .has-error input, .has-error textarea, .has-error select { border-color: var(--error); }
        .field-error { color: var(--error); margin: .2rem 0 0; font-weight: 600; }
        .hint { color: var(--muted); margin: .2rem 0 0; font-size: .9rem; }
        button, .button { display: inline-block; padding: .45rem .9rem; border: 1px solid var(--teal); border-radius: 4px; background: #fff;
            color: var(--teal); font: inherit; cursor: pointer; text-decoration: none; }
        button.primary, .button.primary { background: var(--teal); color: #fff; }
        button.danger, .button.danger { border-color: var(--error); color: var(--error); }
        button:disabled { opacity: .35; cursor: default; }
        button.link { border: 0; background: none; color: inherit; text-decoration: underline; padding: 0; }
        form.inline { display: inline; }
        .actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; margin: 1rem 0; }
        .notice { padding: .6rem .9rem; border-radius: 4px; }
        .notice.success { background: #e3f4ea; border: 1px solid #7cbf96; }
        .notice.error, .error-summary { background: #fdecee; border: 1px solid var(--error); padding: .6rem .9rem; border-radius: 4px; }
        .notice.warning, .conflict { background: #fff7e0; border: 1px solid var(--gold); padding: .6rem .9rem; border-radius: 4px; }
        .status { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .85rem; background: #e5e9e9; }
        .status.published { background: #d9f2e3; }
        .status.archived { background: #eee; color: var(--muted); }
        .columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 2rem; }
        @media (max-width: 800px) { .columns { grid-template-columns: 1fr; } }
        .map { background: #fff; border: 1px solid var(--line); max-width: 100%; height: auto; }
        .map .route { fill: none; stroke: var(--teal); stroke-width: 2; stroke-dasharray: 6 4; }
        .map .stop { fill: var(--gold); stroke: var(--ink); stroke-width: 1; }
        .map .number { font: bold 11px sans-serif; text-anchor: middle; dominant-baseline: central; fill: var(--ink); }
        .map .label { font: 11px sans-serif; fill: var(--ink); }
        .map .scale { stroke: var(--ink); stroke-width: 2; }
        .phone { width: 22rem; max-width: 100%; border: 10px solid #222; border-radius: 24px; background: #fff; padding: 1rem; }
        .phone img { max-width: 100%; }
        dl.current dt { font-weight: 600; } dl.current dd { margin: 0 0 .5rem; }
        .muted { color: var(--muted); }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        .media-picker ul { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 0.75rem; }
        .media-picker li { display: flex; flex-direction: column; gap: 0.25rem; border: 1px solid #ccc; padding: 0.4rem; overflow-wrap: anywhere; }
        .media-picker img { width: 160px; height: 110px; object-fit: cover; background: #eee; }
        .media-picker code.copy { font-size: 0.75rem; }
        fieldset { border: 1px solid var(--line); border-radius: 4px; margin: 0 0 .9rem; max-width: 42rem; }
        legend { font-weight: 600; }
        .map-box { margin: .6rem 0; }
        .map-canvas { height: 420px; border: 1px solid var(--line); border-radius: 6px; background: #e8eeee; }
        fieldset .map-canvas { height: 320px; }
        .leaflet-marker-icon.map-stop { display: flex; align-items: center; justify-content: center; border-radius: 50%; background: var(--teal); color: #fff;
            font: 700 13px/1 system-ui, sans-serif; border: 2px solid #fff; box-shadow: 0 0 0 1px var(--teal); }
        .leaflet-marker-icon.map-pin { border-radius: 50%; background: var(--gold); border: 3px solid #fff; box-shadow: 0 0 0 2px var(--ink); cursor: move; }
        .map-route { stroke: var(--teal); stroke-width: 3; stroke-dasharray: 6 6; fill: none; }
        .route-line { stroke-width: 5; fill: none; stroke-linejoin: round; stroke-linecap: round; }
        .map-label { position: absolute; white-space: nowrap; background: rgba(255,255,255,.92); border: 1px solid var(--line);
            border-radius: 3px; padding: 0 .3rem; font-size: 12px; line-height: 18px; pointer-events: none; }
        .stray { color: var(--error); }
        table.history dl.changes { margin: .3rem 0 0; display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .15rem .6rem; }
        table.history dt { font-weight: 600; }
        table.history dd { margin: 0; white-space: pre-line; }
        table.history del { color: var(--error); }
        table.history ins { color: var(--teal); text-decoration: none; font-weight: 600; }
        .phone-preview { max-width: 26rem; border: 1px solid var(--line); border-radius: 1.5rem; padding: .5rem 1rem 1rem; background: #fff; }
        .preview-stops { list-style: none; padding: 0; }
        .preview-stops h3 { margin: 1rem 0 .2rem; }
        iframe.phone-page { width: 100%; height: 30rem; border: 1px solid var(--line); border-radius: .5rem; }
        .qr-sheet { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 1.5rem; }
        .qr-card { margin: 0; padding: 1rem; border: 1px dashed var(--line); break-inside: avoid; text-align: center; }
        .qr-card svg { width: 100%; max-width: 6cm; min-width: 4cm; height: auto; }
        .qr-card code { font-size: .75rem; word-break: break-all; }
        @media print { header, nav, footer, .breadcrumbs, .no-print { display: none !important; } .qr-card { border-color: #999; } }
    """
}
