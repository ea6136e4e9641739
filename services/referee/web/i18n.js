// The pages' words in English, simplified and traditional Chinese; shared by the review and venue pages.
// The language: ?lang=en|zh-Hans|zh-Hant (zh, zh-CN, zh-TW... are understood), else the browser's language.
"use strict";

const XQI = (() => {
  const en = {
    "review.title": "Game review", "venue.title": "Venue overview", overview: "overview", pgn: "export PGN",
    scoresheet: "scoresheet", red: "red", black: "black", Red: "Red", Black: "Black", both: "both",
    verify: "Verify the ledger", "alerts.open": "Open alerts",
    "alerts.note": "(raised unasked, 23.2: one action answers each)", none: "none", rulings: "Rulings",
    "action.title": "Arbiter action", "action.note": "(what only a person can see; needs an arbiter token)",
    token: "token", action: "action", side: "side", point: "point", article: "article", result: "result",
    fen: "FEN", note: "note", send: "Send",
    "frames.title": "Evidence frames around the selected entry", "frames.hint": "(click one: full size, points marked)",
    "frames.none": "no evidence frames within five entries", "frames.select": "select an entry",
    "filter.camera": "hide hand / camera rows", "filter.rulings": "only rulings",
    "filter.count": v => `${v.shown} of ${v.total} rows shown`,
    "nav.first": "first entry (Home)", "nav.prevMove": "previous move (←)", "nav.prevEntry": "previous entry (↑)",
    "nav.nextEntry": "next entry (↓)", "nav.nextMove": "next move (→)", "nav.last": "last entry (End)",
    "nav.prevMoveLabel": "< move", "nav.nextMoveLabel": "move >", moment: "link to this moment",
    moved: "moved", touched: "touched", disputed: "disputed", close: "close (Esc)",
    "viewer.mapped": v => `points mapped through the calibration of entry ${v.seq}`,
    "viewer.unmapped": "no calibration for this frame: the points are marked on the board beside it",
    "at.entry": v => `after entry ${v.seq}`, fouls: "fouls", pending: "pending",
    "title.game": v => `${v.game} · board ${v.board} · ${v.n} entries`, "title.nogame": "no game given (?game=ID)",
    "th.time": "time", "th.kind": "kind", "th.event": "event", "th.what": "what",
    "verify.ok": v => `${v.n} entries verify · head ${v.head}…`, "verify.bad": v => `FAILS at entry ${v.seq}: ${v.reason}`,
    board: v => `Board ${v.id}`, review: "review", start: "start", "no game": "no game", ply: v => `ply ${v.n}`,
    "venue.summary": v => `${v.boards} boards · ${v.playing} playing · ${v.alerts} alert${v.alerts === 1 ? "" : "s"}`,
    "alert.loss": v => `${v.side} loses: ${v.result}`, "alert.draw": v => `draw: ${v.result}`,
    "alert.mustVary": v => `${v.side} must vary its move`, "alert.judgment": "referred: the arbiter must judge",
    "alert.naturalReached": "natural move limit (自然限着) reached", "alert.naturalDue": "natural move limit (自然限着) coming due",
    "alert.naturalNone": "none yet (play goes on)",
    "alert.flag": v => `${v.side}'s flag is about to fall`, "alert.flagRuling": v => `${v.side} loses if its time runs out`,
    "alert.quiet": "the camera went quiet", "alert.quietRuling": "none (watch the board)",
    "act.confirm": "Confirm", "act.overrule": "Overrule", "act.vary": "Vary", "act.acknowledge": "Acknowledge",
  };
  const hans = {
    "review.title": "对局审查", "venue.title": "赛场总览", overview: "总览", pgn: "导出 PGN", scoresheet: "记录纸",
    red: "红方", black: "黑方", Red: "红方", Black: "黑方", both: "双方", verify: "校验记录链",
    "alerts.open": "待处理警示", "alerts.note": "（系统主动提出，23.2：每项以一次操作答复）", none: "无",
    rulings: "裁决", "action.title": "裁判操作", "action.note": "（只有人能看到的情况；需要裁判令牌）",
    token: "令牌", action: "操作", side: "方", point: "点位", article: "条款", result: "结果", fen: "FEN",
    note: "备注", send: "发送",
    "frames.title": "所选记录前后的证据画面", "frames.hint": "（点击查看原图，已标出点位）",
    "frames.none": "前后五条记录内没有证据画面", "frames.select": "请选择一条记录",
    "filter.camera": "隐藏手部／摄像头记录", "filter.rulings": "只看裁决",
    "filter.count": v => `显示 ${v.shown} / ${v.total} 条`,
    "nav.first": "第一条（Home）", "nav.prevMove": "上一步（←）", "nav.prevEntry": "上一条（↑）",
    "nav.nextEntry": "下一条（↓）", "nav.nextMove": "下一步（→）", "nav.last": "最后一条（End）",
    "nav.prevMoveLabel": "< 上一步", "nav.nextMoveLabel": "下一步 >", moment: "此刻的链接",
    moved: "走子", touched: "摸子", disputed: "争议", close: "关闭（Esc）",
    "viewer.mapped": v => `点位按第 ${v.seq} 条记录的校准映射`,
    "viewer.unmapped": "此画面没有校准：点位标在旁边的棋盘上",
    "at.entry": v => `第 ${v.seq} 条记录之后`, fouls: "犯规", pending: "待处理",
    "title.game": v => `${v.game} · 棋台 ${v.board} · ${v.n} 条记录`, "title.nogame": "未指定对局（?game=ID）",
    "th.time": "时间", "th.kind": "类别", "th.event": "事件", "th.what": "内容",
    "verify.ok": v => `${v.n} 条记录校验通过 · 链头 ${v.head}…`, "verify.bad": v => `第 ${v.seq} 条记录校验失败：${v.reason}`,
    board: v => `棋台 ${v.id}`, review: "审查", start: "开局", "no game": "无对局", ply: v => `第 ${v.n} 步`,
    "venue.summary": v => `${v.boards} 台 · ${v.playing} 台对局中 · ${v.alerts} 个警示`,
    "alert.loss": v => `${v.side}负：${v.result}`, "alert.draw": v => `和棋：${v.result}`,
    "alert.mustVary": v => `${v.side}必须变着`, "alert.judgment": "提交裁判：由裁判判定",
    "alert.naturalReached": "自然限着已到", "alert.naturalDue": "自然限着将到", "alert.naturalNone": "暂无（继续对局）",
    "alert.flag": v => `${v.side}即将超时`, "alert.flagRuling": v => `时间用完则${v.side}负`,
    "alert.quiet": "摄像头已无画面", "alert.quietRuling": "无（请看棋盘）",
    "act.confirm": "确认", "act.overrule": "驳回", "act.vary": "令其变着", "act.acknowledge": "知悉",
  };
  const hant = {
    "review.title": "對局審查", "venue.title": "賽場總覽", overview: "總覽", pgn: "匯出 PGN", scoresheet: "記錄紙",
    red: "紅方", black: "黑方", Red: "紅方", Black: "黑方", both: "雙方", verify: "校驗記錄鏈",
    "alerts.open": "待處理警示", "alerts.note": "（系統主動提出，23.2：每項以一次操作答覆）", none: "無",
    rulings: "裁決", "action.title": "裁判操作", "action.note": "（只有人能看到的情況；需要裁判令牌）",
    token: "令牌", action: "操作", side: "方", point: "點位", article: "條款", result: "結果", fen: "FEN",
    note: "備註", send: "發送",
    "frames.title": "所選記錄前後的證據畫面", "frames.hint": "（點擊查看原圖，已標出點位）",
    "frames.none": "前後五條記錄內沒有證據畫面", "frames.select": "請選擇一條記錄",
    "filter.camera": "隱藏手部／攝影機記錄", "filter.rulings": "只看裁決",
    "filter.count": v => `顯示 ${v.shown} / ${v.total} 條`,
    "nav.first": "第一條（Home）", "nav.prevMove": "上一步（←）", "nav.prevEntry": "上一條（↑）",
    "nav.nextEntry": "下一條（↓）", "nav.nextMove": "下一步（→）", "nav.last": "最後一條（End）",
    "nav.prevMoveLabel": "< 上一步", "nav.nextMoveLabel": "下一步 >", moment: "此刻的連結",
    moved: "走子", touched: "摸子", disputed: "爭議", close: "關閉（Esc）",
    "viewer.mapped": v => `點位按第 ${v.seq} 條記錄的校準映射`,
    "viewer.unmapped": "此畫面沒有校準：點位標在旁邊的棋盤上",
    "at.entry": v => `第 ${v.seq} 條記錄之後`, fouls: "犯規", pending: "待處理",
    "title.game": v => `${v.game} · 棋台 ${v.board} · ${v.n} 條記錄`, "title.nogame": "未指定對局（?game=ID）",
    "th.time": "時間", "th.kind": "類別", "th.event": "事件", "th.what": "內容",
    "verify.ok": v => `${v.n} 條記錄校驗通過 · 鏈頭 ${v.head}…`, "verify.bad": v => `第 ${v.seq} 條記錄校驗失敗：${v.reason}`,
    board: v => `棋台 ${v.id}`, review: "審查", start: "開局", "no game": "無對局", ply: v => `第 ${v.n} 步`,
    "venue.summary": v => `${v.boards} 台 · ${v.playing} 台對局中 · ${v.alerts} 個警示`,
    "alert.loss": v => `${v.side}負：${v.result}`, "alert.draw": v => `和棋：${v.result}`,
    "alert.mustVary": v => `${v.side}必須變著`, "alert.judgment": "提交裁判：由裁判判定",
    "alert.naturalReached": "自然限著已到", "alert.naturalDue": "自然限著將到", "alert.naturalNone": "暫無（繼續對局）",
    "alert.flag": v => `${v.side}即將超時`, "alert.flagRuling": v => `時間用完則${v.side}負`,
    "alert.quiet": "攝影機已無畫面", "alert.quietRuling": "無（請看棋盤）",
    "act.confirm": "確認", "act.overrule": "駁回", "act.vary": "令其變著", "act.acknowledge": "知悉",
  };
  const DICT = { en, "zh-Hans": hans, "zh-Hant": hant };

  // The language asked for (?lang=) or the first of the browser's that we have; Chinese by script or region.
  function pick(asked, preferred) {
    for (const tag of [asked, ...(preferred || [])]) {
      if (!tag) continue;
      const t = String(tag).toLowerCase();
      if (t === "en" || t.startsWith("en-")) return "en";
      if (/^zh(-|$)/.test(t)) return /hant|-tw|-hk|-mo/.test(t) ? "zh-Hant" : "zh-Hans";
    }
    return "en";
  }
  const lang = pick(new URLSearchParams(location.search).get("lang"), navigator.languages || [navigator.language]);

  function t(key, vars = {}) {
    const s = DICT[lang][key] ?? en[key] ?? key;
    return typeof s === "function" ? s(vars) : s;
  }

  // Every element marked data-i18n="key" gets its text, data-i18n-title="key" its tooltip.
  function apply(root = document) {
    document.documentElement.lang = lang;
    root.querySelectorAll("[data-i18n]").forEach(e => { e.textContent = t(e.dataset.i18n); });
    root.querySelectorAll("[data-i18n-title]").forEach(e => { e.title = t(e.dataset.i18nTitle); });
  }

  return { lang, t, apply, pick, DICT };
})();
