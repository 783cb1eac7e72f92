import TSModels

/// Colours and CSS shared by the page and a standalone hypnogram. Stage and series colours are
/// from the Okabe–Ito palette, which stays distinguishable with every common colour-vision
/// deficiency; the hypnogram also gives each stage its own lane, so colour is never the only cue.
/// Light and dark follow `prefers-color-scheme`.
enum ReportStyle {
    /// Hypnogram lanes, top to bottom.
    static let laneOrder: [SleepStage] = [.awake, .rem, .light, .deep]
    /// Stacked bars, bottom to top.
    static let stackOrder: [SleepStage] = [.deep, .light, .rem, .awake]

    static func label(_ stage: SleepStage) -> String {
        switch stage {
        case .awake: "Awake"
        case .rem: "REM"
        case .light: "Light"
        case .deep: "Deep"
        }
    }

    /// The stage's name inside a sentence.
    static func word(_ stage: SleepStage) -> String {
        stage == .rem ? "REM" : label(stage).lowercased()
    }

    static let css = """
        :root {
          color-scheme: light dark;
          --bg: #ffffff; --fg: #1b1b1f; --muted: #5b5d66; --panel: #f5f6f8; --grid: #d5d7dd; --border: #e1e3e8;
          --awake: #D55E00; --rem: #CC79A7; --light: #56B4E9; --deep: #0072B2;
          --total: #0072B2; --efficiency: #009E73; --quality: #E69F00; --heart: #D55E00; --nap: #000000;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #121316; --fg: #e8e9ed; --muted: #a3a6b0; --panel: #1c1e23; --grid: #3a3d45; --border: #2c2f36;
            --total: #56B4E9; --nap: #F0E442;
          }
        }
        .stage.awake, .swatch.awake { fill: var(--awake); background: var(--awake); }
        .stage.rem, .swatch.rem { fill: var(--rem); background: var(--rem); }
        .stage.light, .swatch.light { fill: var(--light); background: var(--light); }
        .stage.deep, .swatch.deep { fill: var(--deep); background: var(--deep); }
        svg.chart { display: block; width: 100%; height: auto; font: 12px system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
        svg.chart text { fill: var(--muted); }
        svg.chart .lane { fill: var(--panel); }
        svg.chart .grid { stroke: var(--grid); stroke-width: 1; }
        svg.chart .axis-line { stroke: var(--muted); stroke-width: 1; }
        svg.chart .trace { fill: none; stroke: var(--fg); stroke-opacity: 0.35; stroke-width: 1; }
        svg.trend.total { --series: var(--total); }
        svg.trend.efficiency { --series: var(--efficiency); }
        svg.trend.quality { --series: var(--quality); }
        svg.trend.heart-rate { --series: var(--heart); }
        svg.chart .series { fill: none; stroke: var(--series); stroke-width: 2; }
        svg.chart .point { fill: var(--series); stroke: var(--panel); stroke-width: 1; }
        svg.chart .range { stroke: var(--series); stroke-width: 2; stroke-opacity: 0.45; }
        svg.chart .average { stroke: var(--fg); stroke-width: 1; stroke-dasharray: 5 4; }
        svg.chart text.average-label { fill: var(--fg); paint-order: stroke; stroke: var(--panel); stroke-width: 4px; stroke-linejoin: round; }
        svg.chart .nap-mark { fill: var(--nap); }
        svg.chart .background { fill: var(--bg); }
        svg.chart text.heading { fill: var(--fg); font-weight: 600; font-size: 13px; }
        """

    static let pageCSS = """
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
        main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 40px; }
        h1 { font-size: 1.6rem; margin: 0 0 4px; }
        h2 { font-size: 1.15rem; margin: 32px 0 10px; }
        h3 { font-size: 0.95rem; margin: 0 0 2px; }
        p { margin: 4px 0; }
        .facts { color: var(--muted); }
        .legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 14px 0 0; padding: 0; list-style: none; color: var(--muted); }
        .legend li { display: flex; align-items: center; gap: 6px; }
        .swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; }
        .swatch.nap { background: var(--nap); border-radius: 50%; width: 10px; height: 10px; }
        .averages { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; margin: 18px 0 0; }
        .average-tile { background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: 10px 14px; }
        .average-tile .value { font-size: 1.4rem; font-weight: 600; }
        .average-tile .name { color: var(--muted); font-size: 0.85rem; }
        .panel { background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: 12px 14px; }
        .trends { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
        .nights { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 12px; }
        figure { margin: 0; }
        figcaption { color: var(--muted); font-size: 0.85rem; margin: 0 0 6px; }
        .naps { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 8px; margin-top: 8px; }
        .naps figcaption { margin: 0; }
        .naps svg.chart { max-width: 340px; }
        table { border-collapse: collapse; width: 100%; font-size: 0.9rem; font-variant-numeric: tabular-nums; }
        th, td { padding: 5px 8px; border-bottom: 1px solid var(--border); text-align: right; }
        th:first-child, td:first-child { text-align: left; }
        th { color: var(--muted); font-weight: 600; }
        .table-wrap { overflow-x: auto; }
        footer { margin-top: 28px; color: var(--muted); font-size: 0.85rem; }
        @media (max-width: 520px) { .trends, .nights { grid-template-columns: 1fr; } }
        """
}
