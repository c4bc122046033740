"""The presentation layer: reports (syncscan.schema's records) to text and HTML.

Renderers read a report and never compute anything the analysis did not: the numbers, the
ranking and the timeline all come from the report (and, for HTML, from the timeline its analysis
drew). The commands (syncscan.commands) choose a renderer and write its output.

    analyze_text.render_text(report)          one trace's analysis
    profile_text.render_profile(report)       a profiled run (also render_comparison)
    join_text.render_join(join)               lint and runtime together
    html.render_html(report, timeline, join)  the self-contained HTML page
"""
