# Block 32 (50 % theoretical) was measured at 300 µs, block 512 at 100 µs, block 64 (100 %
# theoretical, as the model's block 128) at 250 µs: in every format the measured block 512 comes
# before the model's block 128. Gains: (300 - 100) x 10 = 2000 µs, (250 - 100) x 10 = 1500 µs.
set(REQUIRE_text
  [=[Suggestions  1\. Launch it as <<<8192, 512>>>: measured in this trace[^#]*2\. Use 128 threads per block \(grid 32768\)]=]
  [=[3\.50 ms less GPU time in all]=])
set(REQUIRE_markdown
  [=[1\. Launch it as \\<\\<\\<8192, 512\\>\\>\\>: measured in this trace[^#]*2\. Use 128 threads per block \(grid 32768\)]=])
set(REQUIRE_csv
  [=[,"Launch it as <<<8192, 512>>>: measured in this trace, block 512 takes 100 µs for the same 4\.19 M threads where block 32 takes 300 µs \(10 and 10 launches\) — 2000 µs less GPU time over this configuration's launches\. Confidence: high \(measured\)",100\.00,]=])
set(REQUIRE_json
  [=["suggestions": \[[^"]*"kind": "measured_config",[^"]*"text": "Launch it as \\u003c\\u003c\\u003c8192, 512\\u003e\\u003e\\u003e: measured in this trace, block 512 takes 100 µs for the same 4\.19 M threads where block 32]=])
set(REQUIRE_html
  [=[<i style="background:#2b8a3e"></i>suggested: 512 threads, measured fastest, 100\.0% theoretical<i style="background:#868e96"></i>model: 128 threads, 100\.0% predicted, not measured]=]
  [=[<title>suggested: 512 threads, measured fastest]=])
set(FORBID_html [=[suggested: 128 threads]=])
