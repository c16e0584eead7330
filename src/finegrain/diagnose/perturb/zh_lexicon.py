"""Built-in Chinese lexicons for query perturbation: colours, sizes, antonyms, and their blockers.

Hand-made for short image-search queries (CapRetrieval-style). A *blocker* is a
compound that contains a target word without meaning it (``白菜`` cabbage,
``大学`` university, ``冷面`` cold noodles); longest match skips it whole
(:func:`finegrain.diagnose.perturb.text.longest_matches`).

Colours map to a matplotlib colour name, so their RGB distance is computed
exactly as for English. A colour has up to two surface forms: the bare
character used as a modifier (``白猫``) and the ``X色`` word (``白色``); a
replacement keeps the form of the word it replaces.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``."""
    return frozenset(text.split())

# --------------------------------------------------------------------------- colours

# surface -> (matplotlib colour name, form); form "char" (bare modifier) or "word" (X色 and longer).
ZH_COLORS: dict[str, tuple[str, str]] = {
    "红": ("red", "char"), "红色": ("red", "word"),
    "黄": ("yellow", "char"), "黄色": ("yellow", "word"),
    "绿": ("green", "char"), "绿色": ("green", "word"),
    "蓝": ("blue", "char"), "蓝色": ("blue", "word"),
    "紫": ("purple", "char"), "紫色": ("purple", "word"),
    "粉": ("pink", "char"), "粉色": ("pink", "word"), "粉红色": ("pink", "word"),
    "黑": ("black", "char"), "黑色": ("black", "word"),
    "白": ("white", "char"), "白色": ("white", "word"),
    "灰": ("gray", "char"), "灰色": ("gray", "word"),
    "橙色": ("orange", "word"), "橘色": ("orange", "word"), "橘黄色": ("orange", "word"),
    "棕色": ("brown", "word"), "褐色": ("sienna", "word"), "咖啡色": ("saddlebrown", "word"),
    "金色": ("gold", "word"), "银色": ("silver", "word"), "米色": ("beige", "word"),
    "青色": ("teal", "word"), "天蓝色": ("skyblue", "word"), "深蓝色": ("navy", "word"),
    "浅蓝色": ("lightblue", "word"), "深绿色": ("darkgreen", "word"), "浅绿色": ("lightgreen", "word"),
    "金黄色": ("goldenrod", "word"),
}

# Compounds holding a colour character without naming a colour (cabbage, red packet, cucumber, flour, ...).
ZH_COLOR_BLOCKERS: frozenset[str] = _words("""
白菜 大白菜 小白菜 白酒 白天 明白 白领 白糖 蛋白 白开水 白板 白话 白发 坦白 空白 白鹭 红包 红酒 红薯
西红柿 红宝石 红绿灯 网红 红枣 口红 红烧 红利 走红 红书 小红书 红豆 红茶 红牛 黄瓜 黄油 黄金 黄河 黄昏
黄豆 蛋黄 黄牛 黄山 黄鱼 黄花 绿茶 绿化 绿豆 绿洲 蓝牙 蓝莓 蓝图 紫菜 紫外线 紫薯 黑板 黑客 黑龙江
黑夜 黑暗 黑名单 黑洞 灰尘 灰心 石灰 烟灰 粉丝 面粉 米粉 粉末 奶粉 粉笔 粉条 花粉 粉刺 淀粉 螺蛳粉
粉底
""")

# --------------------------------------------------------------------------- sizes

ZH_BIG: tuple[str, ...] = ("大", "巨大", "庞大", "硕大", "大型", "巨型")
ZH_SMALL: tuple[str, ...] = ("小", "微小", "细小", "矮小", "小型", "迷你", "袖珍")

ZH_SIZE_BLOCKERS: frozenset[str] = _words("""
大学 大熊猫 大蒜 大峡谷 大家 大概 大约 大人 大多 大部分 大量 大海 大米 大衣 大巴 大师 大众 大会 大厦
大道 大街 大桥 大门 大厅 大使 大赛 大战 大餐 大虾 大葱 大提琴 大象 大理 大连 大陆 大脑 大夫 大妈 大爷
大姐 大哥 大叔 大豆 大麦 大写 大于 大全 大胆 大方 大气 大王 大神 大片 大头 大厨 大闸蟹 大巴车 大盘
大佬 大赛 大雪 大雨 大风 大小 老大 伟大 强大 重大 放大 扩大 长大 最大 广大 高大上 大专 大一 大二 大三
大四 大年 大寒 大暑 大床 大堂 大楼 大型犬 小区 小红书 小提琴 小时 小时候 小孩 小孩子 小朋友 小学 小说
小姐 小心 小吃 小麦 小米 小组 小丑 小偷 小龙虾 小白菜 小程序 小伙 小伙子 小费 小便 小卖部 小票 小编
小众 小姑娘 小年 小寒 小暑 小满 小雪 小雨 小康 小便宜 大小 从小 最小 缩小 减小 小猪佩奇 小黄鸭 小黄人
小熊猫
""")

# --------------------------------------------------------------------------- antonyms

# word -> opposites; made symmetric on load (finegrain.diagnose.perturb.text.invert_pairs).
ZH_ANTONYM_PAIRS: dict[str, tuple[str, ...]] = {
    "大": ("小",), "大型": ("小型",), "巨大": ("微小",),
    "高": ("矮", "低"), "长": ("短",), "新": ("旧",), "冷": ("热",), "快": ("慢",),
    "胖": ("瘦",), "干": ("湿",), "深色": ("浅色",), "黑色": ("白色",), "黑": ("白",),
    "男性": ("女性",), "男生": ("女生",), "男人": ("女人",), "男孩": ("女孩",), "男士": ("女士",),
    "老人": ("年轻人",), "老年人": ("年轻人",), "古老": ("现代",), "传统": ("现代",),
    "日出": ("日落",), "白天": ("黑夜",), "早上": ("晚上",), "上午": ("下午",), "晴天": ("雨天",),
    "夏天": ("冬天",), "开心": ("难过",), "快乐": ("悲伤",), "干净": ("肮脏",), "明亮": ("昏暗",),
    "安静": ("吵闹",), "二手": ("全新",), "差评": ("好评",), "负面": ("正面",), "延迟": ("提前",),
    "买车": ("卖车",), "买房": ("卖房",), "上涨": ("下跌",), "打开": ("关闭",), "入口": ("出口",),
    "满": ("空",), "真": ("假",), "厚": ("薄",), "宽": ("窄",), "远": ("近",), "亮": ("暗",),
}

ZH_ANTONYM_BLOCKERS: frozenset[str] = (ZH_SIZE_BLOCKERS | ZH_COLOR_BLOCKERS | _words("""
高铁 高速 高中 高考 高兴 高原 高尔夫 高跟鞋 提高 最高 高清 高端 高级 高手 高峰 高楼大厦 高山 高温
长颈鹿 长城 长江 长沙 家长 校长 成长 增长 队长 市长 长辈 长春 生长 延长 擅长 部长 院长 董事长 新疆
新闻 新年 新加坡 新郎 新娘 新鲜 创新 更新 重新 新手 新西兰 新冠 冷面 热狗 热门 热情 热闹 热搜 冷静
冷藏 冷冻 热点 热线 热量 冷笑 快递 快乐 快餐 快捷 快手 加快 凉快 愉快 尽快 赶快 快门 干杯 干活 干部
干嘛 饼干 干净 能干 干扰 萝卜干 肉干 干锅 满意 圆满 满足 满月 空调 空气 天空 空间 航空 星空 空姐 真的
认真 真实 真相 逼真 天真 假期 放假 请假 假日 暑假 寒假 休假 远方 永远 遥远 附近 最近 近视 接近 亮点
月亮 漂亮 照亮 明亮 宽带 宽敞
""")) - frozenset({"快乐", "干净", "明亮"})
