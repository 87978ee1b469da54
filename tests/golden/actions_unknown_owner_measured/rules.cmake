# No loader recorded: the measured 3x (block 128: 30 µs, block 32: 90 µs) is the action, with the
# unknown-owner caveat; gain (90 - 30) x 10 = 600 µs, counted in Recoverable. The short-lived
# blocks inference stays in the kernel's section.
set(REQUIRE_json
  [=["change": "Owner unknown \(no loading library recorded, name not recognized\); if you launch it yourself: Launch it as \\u003c\\u003c\\u003c32768, 128\\u003e\\u003e\\u003e: measured in this trace, block 128 takes 30\.0 µs for the same 4\.19 M threads where block 32 takes 90\.0 µs]=]
  [=["gain_ns": "600000",[^"]*"gain_pct": 50,[^"]*"gain_kind": "measured"]=])
set(FORBID_json [=["change": "[^"]*too short-lived]=])
set(REQUIRE_text [=[Recoverable  600\.0 µs measured]=])
