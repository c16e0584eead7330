"""The world a generated album's owner lives in: places, holidays, names and scenes.

Everything here is a table written by hand, so that a generated album's labels do not depend
on the engine's own naming code:

- **Chinese cities** (none of album1's provinces), each with districts whose Chinese names are
  those of the offline boundary data (``geotool-cn``) and whose English names are the official
  romanisations (polyphones read as the place is read: 长子县 Zhangzi County, 洪洞县 Hongtong
  County, 涡阳县 Guoyang County; 万柏林区 Wanbailin District), and venues (campuses, museums,
  palaces, parks, streets) at their approximate WGS-84 positions;
- **cities abroad** with a centre, the radius that covers the city, and landmarks;
- **statutory holidays**: the official days off of each holiday as the State Council announced
  them (weekends inside a span included) and the day the holiday is named after, for the years
  the generator draws holidays from;
- **names**: surnames and given names with their pinyin (written here, not derived, so 单 is
  Shan and 曾 is Zeng), English given names with their Chinese forms, role and kinship
  nicknames in both languages;
- **scenes**: what a session's photos show, in both languages (the ground truth of the visual
  part of a query; no image is made).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, slots=True)
class District:
    zh: str
    en: str  # with its level word: "Xiaodian District", "Hongtong County"


@dataclass(frozen=True, slots=True)
class Venue:
    zh: str
    en: str
    lat: float
    lon: float


@dataclass(frozen=True, slots=True)
class ChineseCity:
    zh: str
    en: str
    province_zh: str
    province_en: str
    districts: tuple[District, ...]
    venues: tuple[Venue, ...] = ()

    @property
    def short_zh(self) -> str:
        return self.zh[:-1] if self.zh.endswith("市") else self.zh


@dataclass(frozen=True, slots=True)
class CityAbroad:
    zh: str
    en: str
    country_zh: str
    country_en: str
    lat: float
    lon: float
    radius_km: float  # every point of the city's photos lies within this distance of the centre
    landmarks: tuple[Venue, ...]


def _d(*pairs: str) -> tuple[District, ...]:
    return tuple(District(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2))


CHINESE_CITIES: tuple[ChineseCity, ...] = (
    ChineseCity("太原市", "Taiyuan", "山西省", "Shanxi",
                _d("小店区", "Xiaodian District", "迎泽区", "Yingze District", "杏花岭区", "Xinghualing District",
                   "万柏林区", "Wanbailin District", "晋源区", "Jinyuan District"),
                (Venue("晋祠", "Jinci Temple", 37.7069, 112.4407), Venue("山西大学", "Shanxi University", 37.7976, 112.5836))),
    ChineseCity("长治市", "Changzhi", "山西省", "Shanxi",
                _d("潞州区", "Luzhou District", "上党区", "Shangdang District", "潞城区", "Lucheng District",
                   "长子县", "Zhangzi County")),
    ChineseCity("临汾市", "Linfen", "山西省", "Shanxi", _d("尧都区", "Yaodu District", "洪洞县", "Hongtong County")),
    ChineseCity("成都市", "Chengdu", "四川省", "Sichuan",
                _d("锦江区", "Jinjiang District", "青羊区", "Qingyang District", "金牛区", "Jinniu District",
                   "武侯区", "Wuhou District", "成华区", "Chenghua District", "郫都区", "Pidu District"),
                (Venue("宽窄巷子", "Kuanzhai Alley", 30.6697, 104.0557),
                 Venue("成都大熊猫繁育研究基地", "Chengdu Panda Base", 30.7363, 104.1459),
                 Venue("四川大学望江校区", "Sichuan University Wangjiang Campus", 30.6320, 104.0838))),
    ChineseCity("武汉市", "Wuhan", "湖北省", "Hubei",
                _d("江岸区", "Jiang'an District", "江汉区", "Jianghan District", "硚口区", "Qiaokou District",
                   "汉阳区", "Hanyang District", "武昌区", "Wuchang District", "洪山区", "Hongshan District"),
                (Venue("黄鹤楼", "Yellow Crane Tower", 30.5446, 114.3023), Venue("武汉大学", "Wuhan University", 30.5410, 114.3660),
                 Venue("湖北省博物馆", "Hubei Provincial Museum", 30.5630, 114.3650))),
    ChineseCity("西安市", "Xi'an", "陕西省", "Shaanxi",
                _d("碑林区", "Beilin District", "莲湖区", "Lianhu District", "雁塔区", "Yanta District",
                   "未央区", "Weiyang District", "灞桥区", "Baqiao District"),
                (Venue("大雁塔", "Big Wild Goose Pagoda", 34.2197, 108.9643), Venue("西安钟楼", "Xi'an Bell Tower", 34.2610, 108.9424))),
    ChineseCity("郑州市", "Zhengzhou", "河南省", "Henan",
                _d("中原区", "Zhongyuan District", "二七区", "Erqi District", "管城回族区", "Guancheng Hui District",
                   "金水区", "Jinshui District"),
                (Venue("河南博物院", "Henan Museum", 34.7880, 113.6700),)),
    ChineseCity("洛阳市", "Luoyang", "河南省", "Henan",
                _d("老城区", "Laocheng District", "西工区", "Xigong District", "涧西区", "Jianxi District",
                   "洛龙区", "Luolong District"),
                (Venue("龙门石窟", "Longmen Grottoes", 34.5560, 112.4710), Venue("白马寺", "White Horse Temple", 34.7230, 112.6000))),
    ChineseCity("合肥市", "Hefei", "安徽省", "Anhui",
                _d("瑶海区", "Yaohai District", "庐阳区", "Luyang District", "蜀山区", "Shushan District",
                   "包河区", "Baohe District"),
                (Venue("中国科学技术大学", "University of Science and Technology of China", 31.8390, 117.2640),)),
    ChineseCity("亳州市", "Bozhou", "安徽省", "Anhui", _d("谯城区", "Qiaocheng District", "涡阳县", "Guoyang County")),
    ChineseCity("福州市", "Fuzhou", "福建省", "Fujian",
                _d("鼓楼区", "Gulou District", "台江区", "Taijiang District", "仓山区", "Cangshan District",
                   "晋安区", "Jin'an District"),
                (Venue("三坊七巷", "Sanfang Qixiang", 26.0860, 119.2920),)),
    ChineseCity("厦门市", "Xiamen", "福建省", "Fujian",
                _d("思明区", "Siming District", "湖里区", "Huli District", "集美区", "Jimei District", "海沧区", "Haicang District"),
                (Venue("厦门大学", "Xiamen University", 24.4372, 118.0966), Venue("鼓浪屿", "Gulangyu Island", 24.4475, 118.0665))),
    ChineseCity("南昌市", "Nanchang", "江西省", "Jiangxi",
                _d("东湖区", "Donghu District", "西湖区", "Xihu District", "青山湖区", "Qingshanhu District",
                   "红谷滩区", "Honggutan District"),
                (Venue("滕王阁", "Pavilion of Prince Teng", 28.6810, 115.8800),)),
    ChineseCity("昆明市", "Kunming", "云南省", "Yunnan",
                _d("五华区", "Wuhua District", "盘龙区", "Panlong District", "官渡区", "Guandu District", "西山区", "Xishan District"),
                (Venue("翠湖公园", "Green Lake Park", 25.0477, 102.7052),)),
    ChineseCity("南宁市", "Nanning", "广西壮族自治区", "Guangxi",
                _d("兴宁区", "Xingning District", "青秀区", "Qingxiu District", "江南区", "Jiangnan District",
                   "西乡塘区", "Xixiangtang District"),
                (Venue("青秀山", "Qingxiu Mountain", 22.7870, 108.3880), Venue("广西大学", "Guangxi University", 22.8380, 108.2900))),
    ChineseCity("桂林市", "Guilin", "广西壮族自治区", "Guangxi",
                _d("秀峰区", "Xiufeng District", "叠彩区", "Diecai District", "象山区", "Xiangshan District",
                   "阳朔县", "Yangshuo County"),
                (Venue("象鼻山", "Elephant Trunk Hill", 25.2660, 110.2950),)),
    ChineseCity("沈阳市", "Shenyang", "辽宁省", "Liaoning",
                _d("和平区", "Heping District", "沈河区", "Shenhe District", "大东区", "Dadong District", "皇姑区", "Huanggu District"),
                (Venue("沈阳故宫", "Shenyang Imperial Palace", 41.7968, 123.4509), Venue("东北大学", "Northeastern University", 41.7660, 123.4200))),
    ChineseCity("大连市", "Dalian", "辽宁省", "Liaoning",
                _d("中山区", "Zhongshan District", "西岗区", "Xigang District", "沙河口区", "Shahekou District",
                   "甘井子区", "Ganjingzi District"),
                (Venue("星海广场", "Xinghai Square", 38.8800, 121.5860),)),
    ChineseCity("哈尔滨市", "Harbin", "黑龙江省", "Heilongjiang",
                _d("道里区", "Daoli District", "南岗区", "Nangang District", "道外区", "Daowai District", "香坊区", "Xiangfang District"),
                (Venue("中央大街", "Central Street", 45.7735, 126.6177),
                 Venue("哈尔滨工业大学", "Harbin Institute of Technology", 45.7460, 126.6310))),
    ChineseCity("长春市", "Changchun", "吉林省", "Jilin",
                _d("南关区", "Nanguan District", "宽城区", "Kuancheng District", "朝阳区", "Chaoyang District", "二道区", "Erdao District"),
                (Venue("伪满皇宫博物院", "Museum of the Imperial Palace of Manchukuo", 43.9030, 125.3370),)),
    ChineseCity("兰州市", "Lanzhou", "甘肃省", "Gansu",
                _d("城关区", "Chengguan District", "七里河区", "Qilihe District", "安宁区", "Anning District", "西固区", "Xigu District"),
                (Venue("中山桥", "Zhongshan Bridge", 36.0667, 103.8283),)),
    ChineseCity("石家庄市", "Shijiazhuang", "河北省", "Hebei",
                _d("长安区", "Chang'an District", "桥西区", "Qiaoxi District", "新华区", "Xinhua District", "裕华区", "Yuhua District")),
    ChineseCity("海口市", "Haikou", "海南省", "Hainan",
                _d("秀英区", "Xiuying District", "龙华区", "Longhua District", "琼山区", "Qiongshan District", "美兰区", "Meilan District")),
    ChineseCity("呼和浩特市", "Hohhot", "内蒙古自治区", "Inner Mongolia",
                _d("新城区", "Xincheng District", "回民区", "Huimin District", "玉泉区", "Yuquan District", "赛罕区", "Saihan District")),
)


def _v(zh: str, en: str, lat: float, lon: float) -> Venue:
    return Venue(zh, en, lat, lon)


CITIES_ABROAD: tuple[CityAbroad, ...] = (
    CityAbroad("巴黎", "Paris", "法国", "France", 48.8566, 2.3522, 9.0,
               (_v("埃菲尔铁塔", "Eiffel Tower", 48.8584, 2.2945), _v("卢浮宫", "Louvre", 48.8606, 2.3376),
                _v("蒙马特高地", "Montmartre", 48.8867, 2.3431))),
    CityAbroad("伦敦", "London", "英国", "United Kingdom", 51.5074, -0.1278, 15.0,
               (_v("大本钟", "Big Ben", 51.5007, -0.1246), _v("伦敦塔桥", "Tower Bridge", 51.5055, -0.0754),
                _v("大英博物馆", "British Museum", 51.5194, -0.1270))),
    CityAbroad("罗马", "Rome", "意大利", "Italy", 41.9028, 12.4964, 10.0,
               (_v("罗马斗兽场", "Colosseum", 41.8902, 12.4922), _v("特雷维喷泉", "Trevi Fountain", 41.9009, 12.4833),
                _v("梵蒂冈博物馆", "Vatican Museums", 41.9065, 12.4536))),
    CityAbroad("东京", "Tokyo", "日本", "Japan", 35.6812, 139.7671, 15.0,
               (_v("东京塔", "Tokyo Tower", 35.6586, 139.7454), _v("浅草寺", "Senso-ji", 35.7148, 139.7967),
                _v("涩谷十字路口", "Shibuya Crossing", 35.6595, 139.7005))),
    CityAbroad("京都", "Kyoto", "日本", "Japan", 35.0116, 135.7681, 10.0,
               (_v("清水寺", "Kiyomizu-dera", 34.9949, 135.7850), _v("伏见稻荷大社", "Fushimi Inari Shrine", 34.9671, 135.7727))),
    CityAbroad("纽约", "New York", "美国", "United States", 40.7580, -73.9855, 15.0,
               (_v("时代广场", "Times Square", 40.7580, -73.9855), _v("中央公园", "Central Park", 40.7829, -73.9654),
                _v("布鲁克林大桥", "Brooklyn Bridge", 40.7061, -73.9969))),
    CityAbroad("曼谷", "Bangkok", "泰国", "Thailand", 13.7563, 100.5018, 15.0,
               (_v("大皇宫", "Grand Palace", 13.7500, 100.4913), _v("郑王庙", "Wat Arun", 13.7437, 100.4889),
                _v("乍都乍周末市场", "Chatuchak Weekend Market", 13.7999, 100.5505))),
    CityAbroad("首尔", "Seoul", "韩国", "South Korea", 37.5665, 126.9780, 15.0,
               (_v("景福宫", "Gyeongbokgung Palace", 37.5796, 126.9770), _v("南山首尔塔", "N Seoul Tower", 37.5512, 126.9882))),
    CityAbroad("悉尼", "Sydney", "澳大利亚", "Australia", -33.8688, 151.2093, 12.0,
               (_v("悉尼歌剧院", "Sydney Opera House", -33.8568, 151.2153), _v("邦迪海滩", "Bondi Beach", -33.8908, 151.2743))),
    CityAbroad("巴塞罗那", "Barcelona", "西班牙", "Spain", 41.3874, 2.1686, 8.0,
               (_v("圣家堂", "Sagrada Familia", 41.4036, 2.1744), _v("奎尔公园", "Park Guell", 41.4145, 2.1527))),
    CityAbroad("大阪", "Osaka", "日本", "Japan", 34.6937, 135.5023, 10.0,
               (_v("大阪城", "Osaka Castle", 34.6873, 135.5262), _v("道顿堀", "Dotonbori", 34.6687, 135.5013))),
    CityAbroad("清迈", "Chiang Mai", "泰国", "Thailand", 18.7883, 98.9853, 10.0,
               (_v("契迪龙寺", "Wat Chedi Luang", 18.7870, 98.9866), _v("宁曼路", "Nimman Road", 18.7990, 98.9680))),
)


# ------------------------------------------------------------------------------------ holidays


@dataclass(frozen=True, slots=True)
class Holiday:
    key: str
    en: tuple[str, ...]  # English names, the first the usual one
    zh: tuple[str, ...]  # Chinese names: the festival's own (国庆节) first, then short forms (国庆, 十一)
    zh_holiday: str  # the official span's name (国庆假期)


HOLIDAYS: tuple[Holiday, ...] = (
    Holiday("spring_festival", ("Spring Festival", "Chinese New Year"), ("春节",), "春节假期"),
    Holiday("qingming", ("Qingming Festival", "Tomb-Sweeping Day"), ("清明节", "清明"), "清明假期"),
    Holiday("labour_day", ("May Day", "Labor Day"), ("劳动节", "五一"), "五一假期"),
    Holiday("dragon_boat", ("Dragon Boat Festival",), ("端午节", "端午"), "端午假期"),
    Holiday("mid_autumn", ("Mid-Autumn Festival",), ("中秋节", "中秋"), "中秋假期"),
    Holiday("national_day", ("National Day",), ("国庆节", "国庆", "十一"), "国庆假期"),
)

# (holiday key, year) -> (the day the holiday is named after, first and last official day off)
HOLIDAY_DATES: dict[tuple[str, int], tuple[date, date, date]] = {
    ("spring_festival", 2016): (date(2016, 2, 8), date(2016, 2, 7), date(2016, 2, 13)),
    ("qingming", 2016): (date(2016, 4, 4), date(2016, 4, 2), date(2016, 4, 4)),
    ("labour_day", 2016): (date(2016, 5, 1), date(2016, 4, 30), date(2016, 5, 2)),
    ("dragon_boat", 2016): (date(2016, 6, 9), date(2016, 6, 9), date(2016, 6, 11)),
    ("mid_autumn", 2016): (date(2016, 9, 15), date(2016, 9, 15), date(2016, 9, 17)),
    ("national_day", 2016): (date(2016, 10, 1), date(2016, 10, 1), date(2016, 10, 7)),
    ("spring_festival", 2018): (date(2018, 2, 16), date(2018, 2, 15), date(2018, 2, 21)),
    ("qingming", 2018): (date(2018, 4, 5), date(2018, 4, 5), date(2018, 4, 7)),
    ("labour_day", 2018): (date(2018, 5, 1), date(2018, 4, 29), date(2018, 5, 1)),
    ("dragon_boat", 2018): (date(2018, 6, 18), date(2018, 6, 16), date(2018, 6, 18)),
    ("mid_autumn", 2018): (date(2018, 9, 24), date(2018, 9, 22), date(2018, 9, 24)),
    ("national_day", 2018): (date(2018, 10, 1), date(2018, 10, 1), date(2018, 10, 7)),
    ("spring_festival", 2019): (date(2019, 2, 5), date(2019, 2, 4), date(2019, 2, 10)),
    ("qingming", 2019): (date(2019, 4, 5), date(2019, 4, 5), date(2019, 4, 7)),
    ("labour_day", 2019): (date(2019, 5, 1), date(2019, 5, 1), date(2019, 5, 4)),
    ("dragon_boat", 2019): (date(2019, 6, 7), date(2019, 6, 7), date(2019, 6, 9)),
    ("mid_autumn", 2019): (date(2019, 9, 13), date(2019, 9, 13), date(2019, 9, 15)),
    ("national_day", 2019): (date(2019, 10, 1), date(2019, 10, 1), date(2019, 10, 7)),
    ("spring_festival", 2021): (date(2021, 2, 12), date(2021, 2, 11), date(2021, 2, 17)),
    ("qingming", 2021): (date(2021, 4, 4), date(2021, 4, 3), date(2021, 4, 5)),
    ("labour_day", 2021): (date(2021, 5, 1), date(2021, 5, 1), date(2021, 5, 5)),
    ("dragon_boat", 2021): (date(2021, 6, 14), date(2021, 6, 12), date(2021, 6, 14)),
    ("mid_autumn", 2021): (date(2021, 9, 21), date(2021, 9, 19), date(2021, 9, 21)),
    ("national_day", 2021): (date(2021, 10, 1), date(2021, 10, 1), date(2021, 10, 7)),
}
HOLIDAY_YEARS = (2016, 2018, 2019, 2021)
YEARS = (2016, 2017, 2018, 2019, 2020, 2021)  # album1's photos are mostly 2022-2025

# ------------------------------------------------------------------------------------ names

# (character, pinyin); none of album1's surnames (李 陈 林 周 刘 王 张 赵)
SURNAMES: tuple[tuple[str, str], ...] = (
    ("杨", "Yang"), ("黄", "Huang"), ("吴", "Wu"), ("徐", "Xu"), ("孙", "Sun"), ("马", "Ma"), ("朱", "Zhu"),
    ("胡", "Hu"), ("郭", "Guo"), ("何", "He"), ("高", "Gao"), ("罗", "Luo"), ("郑", "Zheng"), ("梁", "Liang"),
    ("谢", "Xie"), ("宋", "Song"), ("唐", "Tang"), ("韩", "Han"), ("冯", "Feng"), ("邓", "Deng"), ("曹", "Cao"),
    ("彭", "Peng"), ("曾", "Zeng"), ("田", "Tian"), ("董", "Dong"), ("潘", "Pan"), ("袁", "Yuan"), ("蔡", "Cai"),
    ("蒋", "Jiang"), ("杜", "Du"), ("叶", "Ye"), ("程", "Cheng"), ("魏", "Wei"), ("苏", "Su"), ("丁", "Ding"),
    ("任", "Ren"), ("姚", "Yao"), ("沈", "Shen"), ("钟", "Zhong"), ("崔", "Cui"), ("谭", "Tan"), ("范", "Fan"),
    ("廖", "Liao"), ("金", "Jin"), ("贾", "Jia"), ("夏", "Xia"), ("方", "Fang"), ("邹", "Zou"), ("熊", "Xiong"),
    ("白", "Bai"), ("孟", "Meng"), ("秦", "Qin"), ("侯", "Hou"), ("薛", "Xue"), ("雷", "Lei"), ("单", "Shan"),
    ("龚", "Gong"), ("邵", "Shao"), ("顾", "Gu"), ("钱", "Qian"), ("戴", "Dai"), ("孔", "Kong"), ("乐", "Yue"),
)
# (two characters, pinyin of each); none of album1's given names
GIVEN_NAMES: tuple[tuple[str, str, str], ...] = (
    ("宇航", "Yu", "hang"), ("思琪", "Si", "qi"), ("子涵", "Zi", "han"), ("浩然", "Hao", "ran"), ("雨桐", "Yu", "tong"),
    ("俊杰", "Jun", "jie"), ("梓萱", "Zi", "xuan"), ("嘉怡", "Jia", "yi"), ("博文", "Bo", "wen"), ("欣然", "Xin", "ran"),
    ("一鸣", "Yi", "ming"), ("诗雨", "Shi", "yu"), ("天佑", "Tian", "you"), ("若曦", "Ruo", "xi"), ("文轩", "Wen", "xuan"),
    ("佳琪", "Jia", "qi"), ("明轩", "Ming", "xuan"), ("语嫣", "Yu", "yan"), ("志强", "Zhi", "qiang"), ("丽娟", "Li", "juan"),
    ("建国", "Jian", "guo"), ("秀英", "Xiu", "ying"), ("海燕", "Hai", "yan"), ("春生", "Chun", "sheng"),
    ("晓东", "Xiao", "dong"), ("雪梅", "Xue", "mei"), ("国华", "Guo", "hua"), ("玉兰", "Yu", "lan"), ("鹏飞", "Peng", "fei"),
    ("婉清", "Wan", "qing"), ("子墨", "Zi", "mo"), ("书瑶", "Shu", "yao"), ("铭泽", "Ming", "ze"), ("雅琴", "Ya", "qin"),
    ("振华", "Zhen", "hua"), ("乐瑶", "Le", "yao"), ("家豪", "Jia", "hao"), ("梦洁", "Meng", "jie"), ("少聪", "Shao", "cong"),
    ("静怡", "Jing", "yi"), ("长青", "Chang", "qing"), ("朝晖", "Zhao", "hui"),
)
# (English, Chinese form in the Chinese face file)
ENGLISH_NAMES: tuple[tuple[str, str], ...] = (
    ("Emma", "艾玛"), ("Jack", "杰克"), ("Lucas", "卢卡斯"), ("Sophie", "苏菲"), ("Oliver", "奥利弗"), ("Mia", "米娅"),
    ("Daniel", "丹尼尔"), ("Tony", "托尼"), ("Kevin", "凯文"), ("Amy", "艾米"), ("Leo", "利奥"), ("Chloe", "克洛伊"),
    ("Ethan", "伊森"), ("Zoe", "佐伊"), ("Ryan", "瑞安"),
)

# A role nickname: (English forms, Chinese forms); the first of each is the one the face file lists first.
ROLE_DAD = (("Dad", "Daddy"), ("爸爸", "老爸"))
ROLE_MOM = (("Mom", "Mommy"), ("妈妈", "老妈"))
ROLE_WIFE = (("wife", "honey"), ("老婆", "亲爱的"))
ROLE_HUSBAND = (("husband", "hubby"), ("老公",))
ROLE_BOYFRIEND = (("Boyfriend",), ("男朋友", "男友"))
ROLE_GIRLFRIEND = (("Girlfriend",), ("女朋友", "女友"))
ROLE_GRANDMA = (("Grandma",), ("奶奶",))
ROLE_GRANDPA = (("Grandpa",), ("爷爷",))
ROLE_SON = (("son",), ("儿子",))
ROLE_DAUGHTER = (("daughter",), ("女儿",))
ROLE_BABY = (("baby",), ("宝宝",))
ROLE_NEPHEW = (("Nephew",), ("侄子",))
ROLE_NIECE = (("Niece",), ("侄女",))
# Words for "the children" of an album whose people include children.
KIDS_WORDS_EN = ("the kids", "the children", "my kids")
KIDS_WORDS_ZH = ("孩子们", "孩子", "小朋友们")

# ------------------------------------------------------------------------------------ scenes

# (English, Chinese): what a session's photos show
SCENES: tuple[tuple[str, str], ...] = (
    ("hot pot dinner", "火锅晚餐"), ("cat napping on the sofa", "沙发上睡觉的猫"), ("sunset over the river", "江边日落"),
    ("snow in the park", "公园里的雪"), ("street food stall", "路边小吃摊"), ("bubble tea", "奶茶"),
    ("cherry blossoms", "樱花"), ("playground slide", "游乐场滑梯"), ("flying a kite", "放风筝"),
    ("night market", "夜市"), ("temple roof", "寺庙屋檐"), ("bronze ware in a museum", "博物馆里的青铜器"),
    ("red lanterns", "红灯笼"), ("beach waves", "海浪"), ("mountain trail", "山间小路"), ("rainy street", "雨天的街道"),
    ("bookstore shelves", "书店书架"), ("latte art", "拿铁拉花"), ("dog on a leash", "牵着绳的小狗"),
    ("goldfish pond", "金鱼池"), ("lotus flowers", "荷花"), ("ginkgo leaves", "银杏叶"), ("view from a train window", "火车窗外的风景"),
    ("airplane wing", "飞机机翼"), ("hotel room", "酒店房间"), ("basketball court", "篮球场"), ("karaoke room", "KTV包厢"),
    ("barbecue skewers", "烧烤串"), ("beef noodle soup", "牛肉面"), ("subway platform", "地铁站台"),
    ("city skyline at night", "城市夜景"), ("old city wall", "古城墙"), ("sandcastle", "沙堡"), ("zoo giraffe", "动物园的长颈鹿"),
    ("aquarium jellyfish", "水族馆的水母"), ("picnic on the grass", "草地野餐"), ("ferris wheel", "摩天轮"),
    ("homemade cake", "自制蛋糕"), ("graduation gown", "学士服"), ("rooftop garden", "屋顶花园"),
)
# Scenes tied to an occasion (a holiday or a birthday): (key, English, Chinese)
OCCASION_SCENES: dict[str, tuple[tuple[str, str], ...]] = {
    "spring_festival": (("dumplings", "饺子"), ("red envelopes", "红包"), ("fireworks", "烟花")),
    "qingming": (("green rice balls", "青团"),),
    "labour_day": (("crowded scenic spot", "人山人海的景区"),),
    "dragon_boat": (("zongzi", "粽子"), ("dragon boat race", "龙舟赛")),
    "mid_autumn": (("mooncakes", "月饼"), ("full moon", "圆月")),
    "national_day": (("national flags on the street", "街上的国旗"),),
    "birthday": (("birthday cake", "生日蛋糕"), ("blowing out candles", "吹蜡烛")),
}
