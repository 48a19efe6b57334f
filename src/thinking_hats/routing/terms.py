"""The router's vocabulary: signal terms per language, as data.

Each entry is a comma-separated list of lower-case terms. A term matches whole words (Latin scripts) or anywhere
(Chinese, Japanese: no word boundaries). Notation:
  `*` at the end     the word may go on (`risk*` matches risks, risky)
  `~` at the start   the term may also end a German compound (`~risik*` matches Ausfallrisiko)
  `!` at the start   no accent-free variant (`!cuándo` must not match the conjunction `cuando`)
  `^` at the start   English text only (`^die` is also a German article)
  a space            any run of whitespace
Every other term also matches without its accents (`décision` matches `decision`), as people often type.
English terms are read in every language: technical writing borrows them.
"""

from __future__ import annotations

LANGUAGES = ("en", "de", "es", "fr", "pt", "zh", "ja")

SIGNAL_TERMS: dict[str, dict[str, str]] = {
    "decision": {
        "en": "should she, should he, do i recommend, do we recommend, would you recommend, makes more sense, "
        "make more sense, should we, should i, should they, should you, should it, should the, should our, "
        "shall we, "
        "ought we, choos*, chose, choice*, pick, picking, select, selecting, decid*, decision*, vs, "
        # (not "option*": "optional" weighs nothing)
        "versus, trade-off*, tradeoff*, trade off, option, options, whether, prefer, preferable, compar*, "
        "pros and cons, "
        "instead of, rather than, go with, worth it, worth the, which one, which is better, would it be better, "
        "is it better, better off, weigh, weighs, weighing, keep or, or not, what do we do, what should we do, "
        "what do i do, what should i do, how do i decide, how do we decide, what now, how do we proceed, "
        "how should we proceed, "
        "how do we handle, how should we handle, how should i handle, how do we respond, how should we respond, "
        "what is the right call, what's the right call, which way, which do we, which should we, which would you, "
        "course of action, the right move, the best move, way forward, the right thing, what would you do, "
        "what would you recommend, what do you recommend",
        "de": "welche empfehlung, empfehlen wir, empfiehlst du, raten wir, am sinnvollsten, sinnvoller, sollen wir, "
        "sollten wir, soll ich, sollte ich, soll man, sollte man, sollen die, müssen wir uns, "
        "~entscheid*, wählen, wählt, auswahl, auswählen, abwäg*, abwägung, option, optionen, ob wir, ob ich, ob man, "
        "vor- und nachteile, vorteile und nachteile, stattdessen, anstatt, statt, lieber, ~vergleich*, lohnt sich, "
        "lohnt es sich, welche variante, welche option, versus, vs, trade-off*, alternativ oder, was tun wir, "
        "was sollen wir tun, was soll ich tun, was machen wir, was mache ich, wie entscheiden wir, "
        "wie gehen wir vor, wie sollen wir vorgehen, wie gehe ich vor, wie soll ich vorgehen, wie reagieren wir, "
        "wie verfahren wir, wie gehen wir damit um, wie gehe ich damit um, was nun, welche linie, welchen weg, "
        "wie positionieren, was würdest du tun, was würden sie tun, was empfiehlst du, was ist das richtige",
        "es": "qué hacer, recomiendas, recomendar, tiene más sentido, más sentido, deberíamos, debemos, debería, "
        "debo, conviene, convendría, decid*, decisión, decisiones, elegir, "
        "elijo, elegimos, elección, escoger, opción, opciones, ventajas y desventajas, pros y contras, en lugar de, "
        "en vez de, compar*, vale la pena, frente a, versus, vs, si deberíamos, nos quedamos, mantener o, "
        "qué hacemos, qué hago, qué debo hacer, qué deberíamos hacer, qué hacer, cómo decidimos, cómo procedemos, "
        "cómo proceder, cómo actuamos, cómo actuar, cómo reaccionamos, cómo lo manejamos, cómo manejamos, y ahora qué, "
        "qué postura, qué camino, qué harías, qué recomiendas, lo correcto",
        "fr": "quoi faire, que faire, recommander, recommandez, conseillez, le plus sensé, devrions-nous, "
        "devons-nous, faut-il, dois-je, devrais-je, devrait-on, doit-on, devrions, devrait-il, "
        "choisir, choix, décid*, décision*, option, options, avantages et inconvénients, pour et contre, au lieu de, "
        "plutôt que, compar*, vaut-il la peine, vaut la peine, arbitrage*, versus, vs, garder ou, se prononcer, "
        "que faire, que fait-on, qu'est-ce qu'on fait, que dois-je faire, que devons-nous faire, comment procéder, "
        "comment on procède, comment réagir, comment réagit-on, comment gérer, comment on gère, comment agir, "
        "quelle ligne, quelle position, quelle attitude, quelle conduite, quelle posture, que ferais-tu, "
        "que feriez-vous, que recommandes-tu",
        "pt": "qual indicar, indicar, recomendar, faz mais sentido, escolho, faz o quê, devemos, deveríamos, devo, "
        "deveria, decid*, decisão, decisões, escolher, escolha*, opção, opções, "
        "prós e contras, vantagens e desvantagens, em vez de, ao invés de, compar*, vale a pena, versus, vs, "
        "manter ou, o que fazemos, o que faço, o que fazer, o que devo fazer, o que devemos fazer, como procedemos, "
        "como proceder, como agimos, como agir, como reagimos, como reagir, como lidar, como lidamos, que postura, "
        "qual postura, qual caminho, o que você faria, o que recomenda, o certo",
        "zh": "哪个好, 怎么做, 是否, 要不要, 该不该, 应不应该, 应该, 选择, 选哪, 决定, 决策, 取舍, 权衡, 利弊, "
        "优缺点, 方案, 选项, "
        "对比, 比较, 值不值得, 值得吗, 哪个更好, 哪一个, 哪种, 怎么办, 如何是好, 该怎么做, 如何处理, 怎么处理, "
        "怎么应对, 如何应对, 该如何, 下一步怎么走",
        "ja": "どう伝える, どう動く, どう伝え, どうする, おすすめ, どちらがいい, べきか, べきでしょうか, "
        "べきですか, すべき, 選ぶ, 選択, 決める, "
        "決定, 検討, 比較, トレードオフ, "
        "メリットとデメリット, メリット・デメリット, 長所と短所, 選択肢, どちら, か否か, かどうか, どっち, "
        "続けるか, やめるか, どうすれば, どうしたら, どうするか, どうすべき, どう対応, どう進め, どう判断, 対応方針",
    },
    "risk": {
        "en": "risk*, fail*, security, insecure, vulnerab*, outage*, downtime, danger*, downside*, breach*, "
        "attack*, exploit*, regression*, bug*, break, breaks, breaking, broken, crash, crashes, data loss, lost data, "
        "go wrong, goes wrong, going wrong, worst case, threat*, unsafe, safety, liabilit*, compliance, rollback, "
        "roll back, incident*, side effect*, contraindicat*, lawsuit*, penalt*, fines, harm*, damag*, leak*, "
        "corrupt*, mistake*, concern*, pitfall*, hazard*, adverse, complication*, misconduct",
        "de": "~risik*, riskant, ~gefahr*, gefährlich*, ~ausfall, ~ausfälle, ~störung*, ~sicherheit*, "
        "~sicherheitslücke*, schwachstelle*, angriff*, fehlschlag*, scheitern, scheitert, schiefgehen, schiefgeht, "
        "schief gehen, ~nachteil*, ~datenverlust*, vorfall, vorfälle, haftung, compliance, nebenwirkung*, absturz, "
        "abstürze, bedrohung*, ~datenschutz*, bußgeld*, klage*, fehler, schaden, schäden, bedenken, gegenanzeige*, "
        "komplikation*, verstoß, verstöße",
        "es": "riesgo*, arriesgad*, peligro*, fallo*, falla*, fracas*, caída*, interrupción, seguridad, vulnerab*, "
        "ataque*, brecha*, desventaja*, pérdida de datos, incidente*, efectos secundarios, efecto secundario, "
        "salir mal, sale mal, responsabilidad legal, multa*, amenaza*, inseguro*, daño*, perjuicio*, contraindica*, "
        "complicacion*, complicación, incumplimiento, sanción, sanciones, demanda judicial, error*",
        "fr": "risque*, risqué*, dangereu*, danger*, panne*, défaillance*, échec*, échouer, sécurité, vulnérab*, "
        "attaque*, faille*, inconvénient*, perte de données, incident*, effets secondaires, effet secondaire, "
        "effets indésirables, mal tourner, tourner mal, responsabilité, conformité, amende*, menace*, régression*, "
        "plantage*, contre-indication*, dommage*, préjudice*, complication*, sanction*, procès, erreur*",
        "pt": "risco*, arriscad*, perigo*, falha*, falhar, fracass*, queda*, indisponibilidade, segurança, "
        "vulnerab*, ataque*, violação, desvantage*, perda de dados, incidente*, efeitos colaterais, "
        "efeito colateral, dar errado, der errado, responsabilidade, conformidade, multa*, ameaça*, regressão, "
        "travamento*, dano*, prejuízo*, contraindica*, complicaç*, sanção, sanções, processo judicial, erro*",
        "zh": "风险, 危险, 故障, 宕机, 停机, 失败, 安全, 漏洞, 攻击, 泄露, 缺点, 弊端, 坏处, 数据丢失, 事故, "
        "副作用, 出错, 出问题, 合规, 责任, 罚款, 威胁, 回滚, 崩溃, 隐患, 后果, 损失, 违规, 诉讼, 并发症, 禁忌",
        "ja": "リスク, 危険, 障害, ダウンタイム, 失敗, セキュリティ, 安全, 脆弱性, 攻撃, 漏洩, 漏えい, デメリット, "
        "欠点, データ損失, 事故, インシデント, 副作用, 不具合, コンプライアンス, 責任, 罰金, 脅威, ロールバック, "
        "クラッシュ, 懸念, 損失, 違反, 訴訟, 合併症, 禁忌, 問題が起き, 問題になる",
    },
    "ideation": {
        "en": "brainstorm*, idea, ideas, alternative*, what if, novel, creative*, creativity, invent*, imagine, "
        "suggestions, any suggestions, suggest some, suggest a few, a few ways, some ways, activities for, "
        "reimagine, innovat*, unconventional, possibilit*, rethink, out of the box, come up with, explore, ways to, "
        "how might we, new approach*, other approach*, different approach*",
        "de": "brainstorm*, ~idee*, alternative*, was wäre wenn, was wenn, kreativ*, neuartig*, erfind*, innovati*, "
        "vorschläge, fällt dir ein, fallen dir, aktivitäten für, "
        "möglichkeiten, neu denken, überdenken, ausdenken, ansätze, anderen ansatz, wege",
        "es": "lluvia de ideas, brainstorm*, idea*, se te ocurren, se os ocurren, se le ocurren, alternativa*, "
        "sugerencias, propón, proponme, actividades para, "
        "qué pasaría si, y si, creativ*, novedos*, innova*, inventar, imaginemos, posibilidades, replantear, "
        "explorar, otras formas, nuevas formas, enfoques, otro enfoque",
        "fr": "remue-méninges, brainstorm*, idée*, alternative*, et si, créatif, créative, créatifs, créatives, "
        "créativité, innov*, inventer, imaginons, "
        "suggestions, pistes, propose-moi, proposez-moi, activités pour, "
        "possibilités, repenser, explorer, autres façons, nouvelles façons, autres manières, approches, "
        "autre approche",
        "pt": "brainstorm*, ideia*, alternativa*, e se, criativ*, inova*, inventar, imaginemos, possibilidades, "
        "sugestões, sugira, atividades para, "
        "repensar, explorar, outras formas, novas formas, abordagens, outra abordagem",
        "zh": "起几个名字, 想点办法, 想几个, 新鲜点, 设计几个, 出几个主意, 有什么办法, 头脑风暴, 想法, 点子, 创意, "
        "替代方案, 其他方案, 其他办法, 别的办法, 创新, 新颖, 发明, 想象, 可能性, "
        "帮我想, 想几个, 想一些, 出几个, 活动方案, "
        "重新思考, 探索, 集思广益, 有什么办法, 新思路, 思路, 怎么让, 如何让, 有什么办法让",
        "ja": "ブレインストーミング, ブレスト, アイデア, アイディア, 代替案, 別の方法, 他の方法, 創造, 創意, 革新, "
        "案をいくつか, 案を出して, 案が欲しい, 提案して, "
        "イノベーション, 斬新, 発明, 想像, 可能性, 見直, 案を出, 新しい方法, 工夫",
    },
    "people": {
        "en": "team*, user*, customer*, client*, feel, feels, feeling*, morale, stakeholder*, employee*, staff, "
        "colleague*, people, community, trust, burnout, burn-out, burned out, frustrat*, unhappy, anxi*, stress, "
        "stressed, stressful, emotion*, culture, hire, hiring, layoff*, patient*, family, families, parent*, "
        "child*, kids, student*, teacher*, manager*, boss, partner*, wife, husband, friend*, relationship*, "
        "conflict*, upset, angry, worried, afraid, motivation, engineers, developers, nurses, doctors, mother, "
        "father, mom, dad, son, daughter, sister, brother, boyfriend, girlfriend, grandparents, co-founder, blame, "
        "apologise, apologize, apology, new hire, overtime, ill, sick, union*, investor*, funder*, insurer*, bank, "
        "lender*, landlord*, tenant*, vendor*, supplier*, author*, co-author*, collaborator*, reviewer*, editor*, "
        "committee, council, governors, inspector*, auditor*, lawyer*, attorney*, judge, founder*, director*, ceo, "
        "cto, cfo, principal, head of, neighbour*, neighbor*, residents, citizens, members, volunteers, donors, "
        "pupils, shareholders, overwhelmed, exhausted, disappointed, scared, resentful, ashamed, guilty, "
        "lonely, grief, grieving, heartbroken",
        "de": "~team*, nutzer*, benutzer*, ~kunde*, ~kunden*, ~mitarbeit*, kolleg*, stakeholder, leute, menschen, "
        "gefühl*, fühlen, fühlt, stimmung, moral, vertrauen, burnout, frust*, unzufrieden*, angst, ängst*, stress*, "
        "emotion*, kultur, entlassung*, patient*, famili*, eltern, kinder, kind, schüler*, lehrer*, chef*, "
        "beziehung*, konflikt*, motivation, partner*, belegschaft, ärzte, pflege*, entwickler*, mutter, vater, "
        "sohn, tochter, schwester, bruder, ehefrau, ehemann, freundin, großeltern, betriebsrat, vorwurf, vorwürfe, "
        "entschuldig*, krank*, gewerkschaft*, investor*, geldgeber*, ~versicherung, bank, ~lieferant*, autor*, "
        "autorin*, ~gutacht*, ~ausschuss, gremium, ~leitung, ~leiter, ~leiterin, geschäftsführ*, vorgesetzt*, anwalt, "
        "anwältin, richter*, ~klinik, nachbar*, bewohner*, bürger*, mitglieder, aktionär*, gründer*, direktor*, "
        "inspektor*, prüfer*, besorgt, wütend, verärgert, enttäuscht, traurig, überfordert, erschöpft, gekränkt, "
        "einsam, trauer, schuldgefühl*",
        "es": "equipo*, usuario*, cliente*, empleado*, personal, colega*, gente, personas, sentir*, siente*, "
        "sentimiento*, moral, confianza, agotamiento, burnout, frustra*, descontent*, ansiedad, ansios*, estrés, "
        "estresad*, emocion*, cultura, contratar, contratación, despido*, paciente*, familia*, padres, hijos, "
        "hija*, hijo, alumnos, estudiantes, profesores, jefe*, relación, conflicto*, motivación, socio*, plantilla, "
        "médicos, enfermer*, desarrolladores, madre, padre, hermana, hermano, esposa, marido, pareja, novio, novia, "
        "abuelos, socia, reproche, culpa, disculp*, enferm*, sindicato*, inversor*, financiador*, aseguradora*, "
        "banco, proveedor*, autor*, revisor*, comité, dirección, director*, directora*, gerencia, inspección, "
        "inspector*, abogad*, juez, vecinos, accionistas, fundador*, miembros, ciudadanos, residentes",
        "fr": "équipe*, utilisateur*, client*, employé*, salarié*, personnel, collègue*, gens, personnes, ressent*, "
        "sentiment*, moral, confiance, épuisement, burn-out, frustr*, mécontent*, anxi*, stress*, émotion*, "
        "culture, recrut*, licenciement*, patient*, famille*, parents, enfant*, élèves, étudiants, enseignants, "
        "professeurs, chef, manager*, relation*, conflit*, motivation, associé*, médecins, infirmi*, développeurs, "
        "mère, père, fils, fille, sœur, frère, mari, compagnon, compagne, conjoint, grands-parents, reproche*, "
        "excuse*, malade*, vécu, syndicat*, investisseur*, financeur*, assureur*, banque, fournisseur*, auteur*, "
        "relecteur*, comité, direction, directeur*, directrice*, inspecteur*, inspection, avocat*, juge, voisins, "
        "actionnaires, fondateur*, membres, citoyens, habitants",
        "pt": "equipe*, equipa*, usuário*, utilizador*, cliente*, funcionário*, colaborador*, colega*, pessoas, "
        "gente, sentir*, sente*, sentimento*, moral, confiança, esgotamento, burnout, frustra*, insatisf*, "
        "ansiedade, ansios*, estresse, stress, emoç*, cultura, contratar, contratação, demiss*, paciente*, "
        "família*, pais, filhos, filha*, filho, alunos, estudantes, professores, chefe*, gestor*, relação, "
        "relacionamento*, conflito*, motivação, sócio*, médicos, enfermeir*, desenvolvedores, mãe, pai, irmã, "
        "irmão, esposa, marido, namorado, namorada, avós, culpa, desculp*, doente*, sindicato*, investidor*, "
        "financiador*, seguradora*, banco, fornecedor*, autor*, revisor*, comitê, comité, direção, diretor*, "
        "diretora*, inspetor*, fiscalização, advogad*, juiz, vizinhos, acionistas, fundador*, membros, cidadãos, "
        "moradores",
        "zh": "团队, 用户, 客户, 员工, 同事, 人员, 大家, 感受, 感觉, 情绪, 士气, 信任, 倦怠, 沮丧, 不满, 焦虑, "
        "压力, 文化, 招聘, 裁员, 患者, 病人, 家人, 家庭, 父母, 孩子, 学生, 老师, 经理, 老板, 关系, 冲突, 利益相关, "
        "股东, 合作伙伴, 人心, 医生, 护士, 工程师, 开发者, 妈妈, 母亲, 爸爸, 父亲, 我爸, 我妈, 儿子, 女儿, 姐姐, "
        "哥哥, 妹妹, 弟弟, 妻子, 老婆, 丈夫, 老公, 男朋友, 女朋友, 爷爷, 奶奶, 家长, 居民, 疲惫, 道歉, 责怪, 新人, "
        "加班, 不好意思, 导师, 生病, 工会, 投资人, 投资方, 资方, 保险公司, 银行, 供应商, 作者, 审稿人, 委员会, 校长, "
        "院长, 主任, 领导, 律师, 法官, 邻居, 合伙人, 创始人, 董事",
        "ja": "チーム, ユーザー, 顧客, お客様, 社員, 従業員, 同僚, メンバー, 人々, 気持ち, 感情, 士気, "
        "モチベーション, 信頼, 燃え尽き, 不満, 不安, ストレス, 文化, 採用, 解雇, リストラ, 患者, 家族, 両親, 子供, "
        "子ども, 学生, 生徒, 先生, 教師, 上司, 部下, 関係, 対立, 利害関係者, ステークホルダー, 株主, パートナー, "
        "医師, 看護師, エンジニア, 開発者, 母, 父, 息子, 娘, 姉, 兄, 妹, 弟, 妻, 夫, 彼氏, 彼女, 祖父, 祖母, 住民, "
        "疲弊, 保護者, 市民, 謝, 責め, 新人, 残業, 病気, 組合, 投資家, 保険会社, 銀行, 取引先, 仕入先, 著者, 査読者, "
        "委員会, 校長, 院長, 部長, 課長, 弁護士, 裁判官, 近所, 役員, 経営陣, 創業者",
    },
    "opportunity": {
        "en": "benefit*, beneficial, opportunit*, upside*, gain*, advantage*, improv*, growth, payoff, potential, "
        "leverage, saving*, faster, cheaper, best case, value, revenue, profit*, roi, efficien*, win, wins, "
        "winning",
        "de": "~vorteil*, nutzen, ~chance*, gelegenheit*, potenzial, ~wachstum*, verbesser*, einsparung*, sparen, "
        "schneller, günstiger, billiger, gewinn*, umsatz, rendite, mehrwert, effizien*",
        "es": "beneficio*, ventaja*, oportunidad*, potencial, crecimiento, mejora*, mejorar, ahorro*, ahorrar, "
        "más rápido, más barato, ganancia*, ingresos, rentab*, eficien*, valor",
        "fr": "bénéfice*, avantage*, opportunité*, potentiel, croissance, amélior*, économie*, gain*, plus rapide, "
        "moins cher, rentab*, revenus, efficac*, valeur, chance",
        "pt": "benefício*, vantage*, oportunidade*, potencial, crescimento, melhora*, melhoria*, melhorar, "
        "economia*, ganho*, mais rápido, mais barato, lucro*, receita, rentab*, eficiên*, valor",
        "zh": "好处, 优点, 优势, 机会, 机遇, 潜力, 增长, 改进, 改善, 提升, 节省, 更快, 更便宜, 收益, 利润, 回报, "
        "效率, 价值",
        "ja": "メリット, 利点, 長所, 機会, チャンス, 潜在, 成長, 改善, 向上, 節約, 削減, 速く, 安く, 収益, 利益, "
        "効果, 効率, 価値",
    },
    "facts": {
        "en": "what is, what are, what was, what were, what's, what does, what do, how many, how much, how long, "
        "how often, how do i, when did, when was, when is, when were, where is, where are, where was, who is, "
        "in total, altogether, how expensive, calculate, "
        "who was, who are, which version, define, definition, number of, ^data, statistic*, measure*, fact*, "
        "evidence, source*, benchmark*, percent*, look up, convert, default, syntax, command, estimate*, roughly, "
        "rough, approximately, formula, difference between",
        "de": "was ist, was sind, was war, was bedeutet, wie viele, wie viel, wie lange, wie oft, wann, wo ist, "
        "insgesamt, wie hoch, wie teuer, was kostet, was kosten, berechne*, ausrechnen, "
        "wo sind, wer ist, wer war, welche version, definition, definier*, anzahl, daten, statistik*, messung*, "
        "messwert*, fakten, beleg*, quelle*, prozent*, standardwert, befehl, syntax, schätz*, ungefähr, formel, "
        "unterschied zwischen",
        "es": "!qué es, !qué son, cuál es, cuáles son, cuántos, cuántas, cuánto, cuánta, !cuándo, !dónde, !quién, "
        "en total, calcula, calcular, "
        "!qué significa, !qué versión, definición, defin*, número de, datos, estadística*, medición, hechos, "
        "evidencia*, fuente*, porcentaje*, comando, sintaxis, estim*, aproximad*, fórmula, diferencia entre",
        "fr": "qu'est-ce que, qu'est-ce qu, c'est quoi, quel est, quelle est, quels sont, quelles sont, combien, "
        "au total, calculer, calcule, "
        "quand, !où est, !où sont, qui est, qui a, que signifie, que veut dire, quelle version, définition, "
        "défini*, nombre de, données, statistique*, mesure*, faits, preuve*, source*, pourcentage*, commande, "
        "syntaxe, estim*, environ, approximati*, formule, différence entre",
        "pt": "o que é, o que são, qual é, quais são, quantos, quantas, quanto, quanta, quando foi, quando é, "
        "no total, calcular, calcule, "
        "onde fica, onde está, quem é, quem foi, o que significa, qual versão, definição, defin*, número de, dados, "
        "estatística*, medição, fatos, factos, evidência*, fonte*, porcentage*, percentage*, comando, sintaxe, "
        "estim*, aproximad*, fórmula, diferença entre",
        "zh": "是什么, 什么是, 多少, 几个, 多久, 多长, 何时, 什么时候, 哪里, 在哪, 谁是, 是谁, 一共, 总共, 合计, "
        "计算, 定义, 数据, 统计, "
        "测量, 事实, 证据, 来源, 百分比, 指什么, 什么意思, 哪一年, 哪个版本, 命令, 语法, 默认, 估算, 估计, 大概, "
        "大约, 区别, 公式, 代表什么",
        "ja": "とは何, とは？, とは?, は何, 何ですか, 何が, いくつ, いくら, どのくらい, どれくらい, 何人, 何年, "
        "合計, 全部で, "
        "いつ, どこ, 誰, 定義, データ, 統計, 測定, 事実, 証拠, 出典, 割合, パーセント, 意味, 何時, コマンド, 構文, "
        "デフォルト, 見積, 概算, およそ, ざっと, 違い, 総額, 何を表す, 計算",
    },
    "stakes": {
        "en": "irreversible, shut down, shutting down, close down, wind down, bankrupt*, insolven*, legal, "
        "regulator*, board, acquisition, acquire, merger, million*, billion*, life-threatening, death, ^die, dying, "
        "surgery, emergency, contract*, strategy, strategic, existential, entire, whole company, permanent*, "
        "long-term, career, quit my job, resign, divorce, invest, investing, investment*, funding, fundraising, "
        "ipo, expansion, relocat*, pricing, market, reorganis*, reorganiz*, restructur*, sell the, exit, accuse*, "
        "infringement, cancer, stroke, tumour, tumor, dementia, terminal, intensive care, icu, retraction, retract, "
        "fraud, expel*, expulsion, custody, eviction, deport*, recall, non-refundable, mortgage, savings",
        "de": "irreversibel, unumkehrbar, schließen, stilllegen, insolvenz, pleite, rechtlich*, ~gesetz*, behörde*, "
        "aufsichtsrat, vorstand, übernahme, fusion, million*, milliard*, mio, mrd, lebensbedrohlich*, tod, sterben, "
        "operation, notfall, vertrag*, strategie*, strategisch*, geschäft, ~geschäft*, unternehmen, dauerhaft, "
        "langfristig*, karriere, kündigen, kündigung, investi*, finanzierung, expansion, umzug, preis*, markt, "
        "~markt*, umstrukturierung*, verkaufen, aufgeben, beschuldig*, krebs, schlaganfall, tumor, demenz, "
        "pflegeheim, intensivstation, ~betrug, rückruf*, schulverweis, sorgerecht, räumung, ~ersparnisse, hypothek, "
        "zurückzieh*",
        "es": "irreversible, cerrar, cierre, quiebra, insolvencia, legal*, regulador*, junta directiva, consejo, "
        "adquisición, fusión, millón, millones, mil millones, mortal, muerte, morir, cirugía, operación, "
        "emergencia, urgencia*, contrato*, estrategia*, estratégic*, negocio*, empresa, permanente*, largo plazo, "
        "carrera, renunciar, dimitir, divorcio, invert*, inversión, financiación, expansión, mudanza, mudarnos, "
        "precio*, mercado*, reestructura*, vender, abandonar, acusa*, cáncer, ictus, tumor, demencia, residencia, "
        "uci, fraude, expuls*, custodia, desahucio, retractación, hipoteca, ahorros",
        "fr": "irréversible*, fermer, fermeture, faillite, insolvabilité, juridique*, légal*, régulateur*, "
        "conseil d'administration, acquisition, rachat, fusion, million*, milliard*, mortel*, décès, mort, mourir, "
        "chirurgie, opération, urgence*, contrat*, stratégi*, entreprise, activité, permanent*, long terme, "
        "carrière, démissionner, quitter mon emploi, divorce, invest*, financement, expansion, déménag*, prix, "
        "tarif*, marché*, restructur*, vendre, abandonner, accuse*, contrefaçon, cancer, avc, tumeur, démence, ehpad, "
        "réanimation, fraude, expuls*, garde des enfants, rétractation, hypothèque, économies",
        "pt": "irreversível, fechar, encerrar, encerramento, falência, insolvência, jurídic*, legal*, regulador*, "
        "conselho de administração, diretoria, aquisição, fusão, milhão, milhões, bilhão, bilhões, mortal, morte, "
        "morrer, cirurgia, operação, emergência, urgência, contrato*, estratégi*, negócio*, empresa, permanente*, "
        "longo prazo, carreira, pedir demissão, demitir-me, divórcio, invest*, financiamento, expansão, preço*, "
        "mercado*, reestrutura*, vender, abandonar, acusa*, câncer, cancro, avc, tumor, demência, lar de idosos, uti, "
        "fraude, expuls*, guarda dos filhos, despejo, retratação, hipoteca, poupança",
        "zh": "不可逆, 关闭, 关停, 倒闭, 破产, 法律, 监管, 董事会, 收购, 并购, 合并, 百万, 千万, 亿, 致命, 死亡, "
        "手术, 急诊, 紧急, 合同, 战略, 整个公司, 永久, 长期, 职业, 辞职, 离婚, 投资, 融资, 扩张, 搬迁, 定价, 市场, "
        "重组, 出售, 放弃, 指控, 侵权, 癌, 中风, 肿瘤, 痴呆, 养老院, 重症, 欺诈, 造假, 开除, 退学, 抚养权, 召回, "
        "撤稿, 房贷, 积蓄, 作弊, 违约, 赔偿, 抢救, "
        "呼吸机, 伦理, 处分, 对赌, 估值, 现金流, 年终奖",
        "ja": "不可逆, 閉鎖, 撤退, 倒産, 破産, 法的, 法律, 規制, 取締役会, 買収, 合併, 百万, 億, 致命, 死亡, 手術, "
        "救急, 緊急, 契約, 戦略, 会社全体, 永続, 長期, キャリア, 退職, 辞め, 離婚, 投資, 資金調達, 拡大, 移転, "
        "価格, 市場, 事業, 再編, 売却, 断念, 告発, 侵害, がん, 癌, 脳卒中, 腫瘍, 認知症, 介護施設, 集中治療, 不正, "
        "捏造, 退学, 親権, リコール, 撤回, 住宅ローン, 貯金",
    },
    "planning": {
        "en": "plan, planning, roadmap, rollout, roll out, schedule, milestone*, checkpoint*, in what order, "
        "lay out, step by step, phased, timeline, "
        "sequence, prepare, preparation, organise, organize, how do we organi*, onboarding, curriculum",
        "de": "plane, planen, planung, plan, fahrplan, ablauf, reihenfolge, meilenstein*, vorbereiten, bereite, "
        "zeitplan, schritt für schritt, schrittweise*, konzept, "
        "vorbereitung, organisier*, einführung",
        "es": "planificar, planifica, planificación, plan, hoja de ruta, en qué orden, etapas, hitos, preparar, "
        "cronograma, paso a paso, por fases, "
        "prepara, preparación, organizar, organizamos, organiza",
        "fr": "planifier, planifie, planification, plan, feuille de route, dans quel ordre, étapes, jalons, "
        "rétroplanning, étape par étape, par phases, "
        "préparer, prépare, préparation, organiser, organise",
        "pt": "planejar, planeje, planear, planejamento, plano, roteiro, em que ordem, etapas, marcos, preparar, "
        "cronograma, passo a passo, por fases, como conduzir, "
        "prepare, preparação, organizar, organizamos",
        "zh": "规划, 计划, 安排, 流程, 步骤, 路线图, 里程碑, 准备, 筹备, 组织, 先后顺序, 时间表, 分阶段, 循序渐进",
        "ja": "計画, 段取り, 手順, 体制, 整理, 準備, ロードマップ, 工程, 進め方, プラン, スケジュール, 段階的",
    },
    "stakeholders": {
        # (not a bare "against": "ran the report against staging", "the PR against main")
        "en": "wants, want us, wanted, fear, fears, worries, insist*, object, objects, oppos*, is against, "
        "are against, was against, were against, against it, against this, against that, against the idea, "
        "voted against, disagree*, "
        "demand*, refus*, argu*, push for, pushes, complain*, warn*, threaten*, divided, at odds, expects, "
        "loves it, hates, asks for, waiting on us, split on, says, said, needs, requires, require, thinks, "
        "believes, proposes, suggests, recommends, consented, supports, backs, has doubts, have doubts, deny, denies, "
        "denied, begs, begged, urges, urged, intends, hopes, rejects, rejected, defends, protest*, resists, "
        "downplay*, minimis*, minimiz*, lobb*, terrified, furious, are split, is split, won't, will not, unwilling, "
        "reluctant, agrees, agreed",
        "de": "will, wollen, möchte, möchten, fürchtet, fürchten, befürchtet, sorgt sich, sorgen sich, besteht auf, "
        "bestehen auf, dagegen, lehnt, widerspricht, uneinig, verlangt, verlangen, fordert, fordern, drängt, "
        "drängen, warnt, beschwer*, beklagt, strikt, hält ihn, gespalten, uneins, befürchten, pocht auf, pochen auf, "
        "lehnen ab, sagt, sagen, meint, meinen, "
        "braucht, brauchen, schlägt vor, empfiehlt, unterstützt, sind dafür, ist dafür, zweifelt, zweifeln, "
        "bestreitet, bestreiten, leugnet, verweigert, verweigern, bittet, bitten, fleht, droht, drohen, beharrt, "
        "lehnt ab, besteht darauf, hofft, hoffen, will nicht, wollen nicht, weigert sich, weigern sich, verteidigt, "
        "protestier*, ist bereit, sind bereit",
        "es": "quiere, quieren, teme, temen, preocupa, insiste*, se opone*, en contra, discrepa*, opinan distinto, "
        "no están de acuerdo, exige*, exigen, reclama*, presiona*, advierte*, se queja*, quejado, prefiere*, pide, "
        "piden, dividid*, dice, dicen, necesita, necesitan, cree, creen, propone, sugiere, recomienda, apoya, "
        "apoyan, están a favor, considera, tiene dudas, tienen dudas, quiero, dependen de, depende de, niega, niegan, "
        "se niega, se niegan, rechaza*, suplica*, defiende*, protesta*, espera que, esperan que, está dispuest*, "
        "minimiza*, pretende, pretenden, piensa, piensan, opina, opinan",
        "fr": "veut, veulent, craint, craignent, s'inquiète*, insiste*, s'oppose*, contre, pas d'accord, exige*, "
        "réclame*, pousse*, avertit, se plaint, plaignent, préfère*, demande, demandent, divisé*, dit, disent, "
        "a besoin, ont besoin, pense, pensent, propose, suggère, recommande, soutient, sont pour, a des doutes, "
        "ont des doutes, refuse, refusent, nie, nient, rejette*, supplie*, défend, défendent, proteste*, espère, "
        "espèrent, minimise*, est prêt, sont prêts, estime, estiment",
        "pt": "quer, querem, teme, temem, preocupa*, insiste*, se opõe, se opõem, contra, discorda*, exige*, "
        "reclama*, pressiona*, alerta*, queixa*, prefere*, pede, pedem, dividid*, diz, dizem, precisa, precisam, "
        "acha, acham, propõe, sugere, recomenda, apoia, apoiam, são a favor, considera, tem dúvidas, têm dúvidas, "
        "nega, negam, recusa*, rejeita*, implora*, defende*, protesta*, espera que, esperam que, minimiza*, "
        "está disposto, pretende, pretendem, acredita, acreditam, opina",
        "zh": "希望, 想要, 担心, 坚持, 反对, 不同意, 意见不一, 分歧, 要求, 抱怨, 投诉, 警告, 支持, 观望, 不想, "
        "听到风声, 说要, 说想, 表示, 认为, 建议, 主张, 提出, 更想, 犹豫, 怀疑, 否认, 拒绝, 恳求, 坚决, 打算, 不愿, "
        "不肯, 不许, 不让, 同意, 觉得, 执意, 宁愿, 只想, 一心",
        "ja": "希望, 望んで, 心配, 反対, 反発, 求め, 主張, 苦情, 意見が分かれ, ほしい, 言い, 声が, 言って, 考えて, "
        "提案, 勧め, 支持, 迷って, 否定, 拒否, 拒ん, 嫌が, 渋っ, つもり, 気がな, 気はな, 譲らな, 訴え, 頼ま, 頼ん, "
        "望ま, こだわ, と言う, と言っ",
    },
}

# A yes/no question about what we or I should do ("Do we settle the suit?") is a decision whatever its words:
# matched at the start of a question (Latin scripts, after any "¿") or anywhere in it (Chinese, Japanese).
# Questions asking for a fact open with a question word, which these leave out.
# Question words, and verbs that ask about facts or abilities ("¿Necesito visado?"), are not decisions.
_ES_WH = (
    "qué|que|cuál|cual|cuáles|cómo|como|cuándo|cuando|dónde|donde|quién|quien|cuánto|cuanto|cuántos|cuántas|por|"
    "necesito|necesitamos|tengo|tenemos|sé|sabemos|puedo|podemos|hay|algo|todo|solo|somos|estamos|"
    # words ending in -o that are no verb in the first person
    "no|plazo|caso|modelo|pago|precio|tipo|año|mismo|nuevo|otro|cuánto|centro|grupo|equipo|proyecto|trabajo|"
    "periodo|período|contrato|sueldo|gasto|costo|servicio|producto|cliente|médico|alumno|registro"
)
_PT_WH = (
    "o|que|qual|quais|como|quando|onde|quem|quanto|quantos|quantas|por|porque|preciso|precisamos|tenho|temos|sei|"
    "sabemos|posso|podemos|há|algo|tudo|só|somos|estamos|"
    # words ending in -o that are no verb in the first person
    "no|do|ao|dos|nos|isso|isto|caso|prazo|modelo|preço|tipo|ano|mesmo|novo|outro|centro|grupo|projeto|trabalho|"
    "período|contrato|salário|custo|serviço|produto|cliente|médico|aluno|registro|pedido"
)
DECISION_QUESTIONS: dict[str, str] = {
    "en": r"^(?:so,? )?(?:do|should|shall|must) (?:we|i)\b(?! (?:need|have|know|get)\b)|^is it (?:time|worth|wise)\b"
    # A question opening with an action verb proposes doing it: "Expel the student?", "Promote the replica now?"
    r"|^should (?:our|my|he|she|they)\b"
    r"|^(?P<verb>accept|adopt|advise|approve|buy|cancel|close|continue|cut|delay|drop|escalate|expel|fail over|"
    r"file|fire|"
    r"go ahead|go live|hire|keep|kill|scrap|axe|abandon|exit|give in|back down|resign|launch|lay off|merge|"
    r"migrate|move|deprecate|sunset|retire|discontinue|renew|extend|ban|allow|admit|discharge|operate|intervene|"
    r"confront|apologi[sz]e|invest|pay|offer|outsource|spin off|"
    r"notify|disclose|pause|postpone|promote|publish|pull|quit|raise|recall|refund|reject|relocate|"
    r"replace|report|retract|rewrite|roll back|sell|settle|shut|sign|stop|sue|suspend|switch|take|tell|terminate|"
    r"withdraw|plead|waive|evacuate|breach)\b(?! (?:me|us|a look)\b)|\byes or no\b"
    # Any verb first, its object after it: "Ground the whole drone fleet?", "Permanently exclude the boy?" (not a
    # question word, an auxiliary, a preposition, a conjunction, a determiner or a pronoun first)
    r"|^(?:\w+ly )?(?!(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|will|"
    r"would|should|shall|may|might|must|has|have|had|in|on|at|for|with|after|before|of|from|to|about|during|since|"
    r"under|over|between|into|through|by|per|via|without|within|despite|given|like|and|but|or|so|if|because|"
    r"although|though|while|unless|the|a|an|this|that|these|those|all|any|some|no|every|each|both|either|neither|"
    r"my|our|your|his|her|their|its|i|we|you|he|she|they|it|there|here|not|also|just|only|even|still|maybe|"
    r"perhaps|really|anyone|anything|someone|something|got|seen|thoughts|worth|"
    # a request to the thinking tool, not a course of action to weigh: "Plan a 6-week unit", "Summarize the themes"
    r"plan|draft|write|list|summari[sz]e|find|give|show|tell|explain|describe|make|create|build|sketch|outline|"
    r"compare|estimate|calculate|check|review|suggest|propose|name|help|walk|map)\b)"
    r"(?P<act>[a-z]+(?:-[a-z]+)?) (?:the|a|an|our|my|his|her|their|this|that|these|those|all|both|every|him|them|"
    r"it|now|today|tonight)\b",
    # The verb first: "Schließen wir das Werk?", "Soll ich es ihm sagen?" (not "Haben wir ein Backup?").
    # Not a conjunction or a question word ("Wenn wir den Preis erhöhen, steigt dann der Umsatz?" is a sum).
    "de": r"^(?!(?:haben|habe|hat|gibt|wissen|weiß|kennen|brauchen|brauche|können|kann|sind|waren|wenn|falls|ob|"
    r"dass|weil|als|sobald|bevor|nachdem|bis|seit|obwohl|damit|wie|was|wo|wann|warum|wieso|weshalb|wer|wen|wem|"
    r"welche\w*|womit|wofür|woran|worauf|wozu|sofern|solange|während)\b)(?:\w+ (?:wir|ich)\b"
    # or a course of action in the infinitive, its first clause ending on the verb: "Paper zurückziehen?",
    # "Banking-App morgen live schalten, obwohl der Befund offen ist?" (not a modal: "…zustimmen müssen?")
    # (the router checks that the verb is written in lower case: "Tropfen pro Minute?" asks for a noun's number)
    r"|(?!(?:ist|sind|war|waren|wird|wurde|wurden|werden|hatte|hatten|muss|darf|dürfen|stimmt|reicht|gilt|geht|"
    r"läuft|liegt|steht|braucht|fällt|zählt|kommt|bekommt|bekommen|mit|bei|in|an|auf|für|von|zu|um)\b)"
    r"[^,?]*\b(?!(?:müssen|können|sollen|dürfen|wollen|werden|haben|sein)\b)(?P<inf>\w{3,}(?:en|ern|eln))\s*(?:[,?]|$))"
    r"|\bja oder nein\b",
    "es": rf"^(?:(?:le|lo|la|les|los|las|me|nos|se|te) )?(?!(?:{_ES_WH})\b)\w+(?:amos|emos|imos|o)\b"
    # or a course of action in the infinitive first: "¿Cerrar la planta de Tijuana?"
    r"|^(?:"
    r"aceptar|despedir|cerrar|vender|firmar|demandar|denunciar|renunciar|pagar|cancelar|suspender|expulsar|"
    r"operar|retirar|lanzar|abandonar|contratar|mudar|trasladar|migrar|publicar|decir|contar|mantener|"
    r"dejar|renovar|reembolsar|comprar|invertir|intervenir|desconectar|parar|rechazar|echar|seguir|"
    r"continuar|aplazar|posponer|retrasar|recortar|ceder|liquidar|fusionar|internar|amputar|reportar|"
    r"avisar|informar|readmitir|apelar|recurrir|indemnizar|esperar|vigilar|aguantar"
    r")(?:lo|la|le|los|las|les)?\b"
    r"|\bs[ií] o no\b",
    "fr": r"^(?:doit-on|faut-il|devons-nous|devrions-nous|dois-je|devrais-je|peut-on|pouvons-nous|allons-nous|"
    r"va-t-on|est-ce qu'on|est-ce que nous|est-ce que je|on (?!a\b|sait\b|peut\b|connaît\b|est\b)\w+|"
    # "Je démissionne demain ?": the speaker doing something, asked (not "je sais", "je peux", "je suis")
    r"je (?!suis\b|sais\b|peux\b|connais\b|dois\b|ne\b|n'|me\b|m')\w+(?:e|s)|"
    r"nous (?!sommes\b|avons\b|savons\b|pouvons\b)\w+ons)\b"
    # or a course of action in the infinitive first: "Licencier Julien pour faute grave ?"
    r"|^(?:"
    r"accepter|licencier|porter plainte|signer|vendre|fermer|arrêter|abandonner|lancer|retirer|"
    r"démissionner|payer|rembourser|annuler|reporter|opérer|céder|racheter|déménager|embaucher|renvoyer|"
    r"exclure|suspendre|poursuivre|attaquer|dénoncer|signaler|publier|dire|annoncer|maintenir|quitter|"
    r"refuser|accorder|prolonger|renouveler|migrer|basculer|couper|intervenir|hospitaliser|amputer|rompre|"
    r"résilier|investir|fusionner|délocaliser|recruter|sanctionner|alerter|prévenir|avouer|retarder|"
    r"repousser|relancer|cesser|saisir|faire appel|transiger|surveiller|attendre|garder|continuer"
    r")\b"
    r"|\boui ou non\b",
    "pt": rf"^(?:(?:o|a|lhe|me|nos|se|te) )?(?!(?:{_PT_WH})\b)\w+(?:amos|emos|imos|omos|o)\b"
    r"|^(?:"
    r"aceitar|demitir|fechar|vender|assinar|processar|denunciar|pagar|cancelar|suspender|expulsar|operar|"
    r"retirar|lançar|abandonar|contratar|mudar|migrar|publicar|contar|manter|deixar|renovar|devolver|"
    r"comprar|investir|internar|desligar|parar|recusar|desistir|adiar|atrasar|cortar|ceder|fundir|amputar|"
    r"intubar|avisar|informar|recorrer|indenizar|reembolsar|despedir|entregar|readmitir|interromper|esperar|"
    r"aguardar|observar|segurar"
    r")(?:-(?:lo|la|los|las))?\b"
    r"|\bsim ou não\b",
    # "签不签？": a verb, 不, the verb again (not 是不是, 有没有: facts)
    "zh": r"要不要|该不该|应不应该|是否|还要不要|我们(?:该|应该|要)|我(?:该|应该|要不要)|([^\W是有对好能会行])不\1",
    # (not a request or a check: "まとめてくれる？", "…で合ってる？")
    "ja": r"^(?!.*(?:何|いつ|どこ|誰|どう|どの|いくつ|いくら|どれ|なぜ|どちら|"
    r"くれる|もらえ|いただけ|で合って|合ってる|正しい|よね)).*"
    r"(?:べきか|べきですか|べきでしょうか|"
    r"しますか|しましょうか|するか|べき[？?]|(?<!あ|い|か|き|り)[るすくうつむぶぐ](?:か?[？?]|か(?=[。\s]*$)))[。？?\s]*$",
}

# A question about what is true opens with a question word or a verb whose subject is not us ("Does the ALTER
# rewrite the table, or is it metadata-only?", "Ist E11.9 der Code ..., oder ...?", "¿nginx devuelve 502 o 504?"):
# its "or" names the candidate answers, not options to weigh. "Do we..."/"Should I..." stay choices.
FACT_QUESTIONS: dict[str, str] = {
    "en": r"^(?:is|are|was|were|does|did|has|had|will it|would it|can it|could it|do (?:they|these|those|you)|"
    r"what(?! (?:do|should|would|shall|can) (?:we|i)\b)|which|when|where|who|whom|whose|how many|how much|how long|"
    r"how often)\b",
    "de": r"^(?:ist|sind|war|waren|gilt|gibt|hat|wird|wurde|kann man|braucht man|muss man|wie viele|wie viel|"
    r"wie lange|welche\w*|wann|wo|wer|wen|wem)\b|^\S+ (?:ist|sind|gilt|war) doch\b",
    "es": r"^(?:es|son|está|están|era|fue|hay|se puede|cuál|cuáles|cuándo|dónde|quién|quiénes|cuánto\w*)\b",
    "fr": r"^(?:est-ce que (?:c'|il |elle |ce |ça )|c'est|est-il|est-elle|faut-il (?:un|une|des|le|la)|quel\w*|"
    r"quand|où|qui|combien|elle est|il est)\b",
    "pt": r"^(?:é|são|está|estão|era|foi|há|tem|qual|quais|quando|onde|quem|quant\w*)\b",
    "zh": r"^(?![^，。？]*(?:我们|咱们|我该|我要|要不要|该不该|应该))[^，。？]*是[^，。？]*还是",
    "ja": r"^(?!.*(?:べき|しますか|しましょうか|する\?|する？)).*(?:ですか|でしょうか|のか|んですか)",
}

# Of those, the closed questions a fact answers, by their opening verb ("Is apixaban taken once or twice a day?",
# "Does ARR include one-time fees?", "Steht im Log, warum es abbricht?"): a lookup, unless they ask whether
# something is worth it, wise, right or safe.
FACT_ASKS: dict[str, str] = {
    "en": r"^(?:is|are|was|were|does|did|has|had|do (?:they|these|those))\b"
    r"(?!.*\b(?:worth|wise|better|right|fair|safe|ok|okay|enough|good idea|too risky)\b)",
    "de": r"^(?:ist|sind|gilt|gibt es|braucht man|muss man|steht|stimmt)\b"
    r"(?!.*\b(?:sinnvoll|besser|richtig|fair|sicher|vertretbar|lohnt)\b)",
    "es": r"^(?:es|son|hay|hace falta)\b(?!.*\b(?:mejor|sensato|justo|seguro|conviene|vale la pena)\b)",
    # (also the subject first, then the verb: "Le coefficient est-il significatif ?")
    "fr": r"^(?:est-ce que (?:c'|il |elle |ce |ça )|faut-il (?:un|une|des|le|la)|y a-t-il|est-il|est-elle|"
    r"(?:le|la|les|l'|ce|cette|ces) [^?,]{1,50}\b(?:est|sont)-(?:il|elle|ils|elles)\b)"
    r"(?!.*\b(?:mieux|raisonnable|juste|sûr|prudent|vaut la peine)\b)",
    "pt": r"^(?:é|são|há|precisa)\b(?!.*\b(?:melhor|sensato|justo|seguro|vale a pena)\b)",
    "zh": r"(?!)",
    "ja": r"(?!)",
}

# Weighing whether to do something, in a statement as much as in a question: "母に胃ろうを作るかどうか、明日までに
# 決めないといけない。" (Chinese "要不要" in a statement is as often a step: "再决定要不要减量" after a check).
WHETHER: dict[str, str] = {
    "ja": r"^(?!.*(?:確認|調べ|チェック|分から|わから)).*[るすくうつむぶぐ]かどうか",
}

# Words that announce the parts of a multi-part thought (counted as structure).
SEQUENCE_TERMS: dict[str, str] = {
    "en": "first, firstly, second, secondly, third, thirdly, then, finally, lastly, additionally, moreover, "
    "furthermore, on the other hand, meanwhile",
    "de": "erstens, zweitens, drittens, zunächst, dann, schließlich, außerdem, darüber hinaus, zudem, ferner, "
    "andererseits",
    "es": "primero, segundo, tercero, en primer lugar, en segundo lugar, luego, después, finalmente, por último, "
    "además, asimismo, por otro lado",
    "fr": "premièrement, deuxièmement, troisièmement, d'abord, ensuite, puis, enfin, finalement, de plus, "
    "en outre, par ailleurs, d'autre part",
    "pt": "primeiro, segundo, terceiro, primeiramente, depois, então, finalmente, por fim, por último, "
    "além disso, ademais, por outro lado",
    "zh": "首先, 其次, 然后, 最后, 另外, 此外, 第一, 第二, 第三, 再者, 同时, 另一方面",
    "ja": "まず, 次に, 最後に, さらに, 第一に, 第二に, 一つ目, 二つ目, 加えて, 一方で, その上",
}

# "A or B": a question offering options is a decision, whatever words carry it.
OR_TERMS: dict[str, str] = {
    "en": "or",
    "de": "oder",
    "es": "o, u",
    "fr": "ou",
    "pt": "ou",
    "zh": "还是, 或者, 或是",
    "ja": "それとも, または, あるいは, もしくは",
}

# "Two or more", "a week or so": an amount, not options.
OR_AMOUNT: dict[str, str] = {
    "en": "more, less, fewer, so, later, earlier, longer, above, below",
    "de": "mehr, weniger, später, früher, länger",
    "es": "más, menos",
    "fr": "plus, moins",
    "pt": "mais, menos",
    "zh": "以上, 以下",
    "ja": "以上, 以下",
}

# Frequent short words that tell the Latin-script languages apart (the CJK ones are told apart by script). A word
# listed for two languages tells nothing and is ignored.
STOPWORDS: dict[str, str] = {
    "en": "the and is are were of to we it this that with for not should what how our be have on can do does did "
    "which who when where why you they there their would could if but than then so my your been has",
    "de": "der die das und ist sind nicht wir ich ein eine einen zu mit für sollen sollten oder auf den dem des wie "
    "auch sich bei wird werden kann können wer wann warum welche welcher unser unsere ob noch nur schon aber "
    "uns mir mich ihr sie zum zur vom im nach über unter vor aus durch gegen ohne beim dass weil wenn als jetzt hier "
    "sehr mehr kein keine seit nochmal doch welchem welchen welches",
    "es": "el los las y es son está están del una para con nuestro nuestra nosotros debemos lo pero más muy qué "
    "cuál cuándo cómo dónde quién también hay ya al deberíamos sus nos le esto eso sin hasta tiene tienen puede pueden "
    "yo mi hace otro ahora",
    "fr": "le les et est sont ne pas des une puis ensuite aussi faire cela ça elle selon afin pour avec nous notre "
    "nos il ils ce qui dans au aux sur plus cette quel "
    "quelle quand comment où pourquoi faut doit être avons sommes du je vous on par très sans chez leur leurs ces moi "
    "lui combien deux trois fois jour avant après depuis déjà encore tout tous rien alors donc",
    "pt": "o os e é são está estão não nao do da dos das uma com nosso nossa nós devemos em na ao isso mas muito "
    "qual quando onde quem também há já deveríamos você vocês pelo pela sem até ainda agora depois antes seu sua "
    "seus suas ele ela eles elas meu minha tem têm foi vai vão quantos quantas",
}

# Letters (and endings) only one of them uses: evidence for short thoughts with few frequent words.
LETTERS: dict[str, tuple[str, ...]] = {
    "de": ("ä", "ö", "ü", "ß"),
    "es": ("ñ", "¿", "¡"),
    "fr": ("è", "ù", "œ", "î", "ë"),
    "pt": ("ã", "õ", "ção", "ções"),
}

# Simple asks (round 4): what a careful engineer answers with one hat however much context surrounds it. A lookup
# or a sum asked in one of the thought's questions ("Which clause caps our liability?", "哪一条规定了…？", "第何条？";
# a short question after several numbers, "Total?", is one too), or requested in its first or last sentence when
# it asks no question (opening one of its first two or its last sentence: "Extract the...", or anywhere in Chinese
# and Japanese: "…だけ抜き出して。"), and
# a next mechanical step ("Next: reissue the two invoices"). None holds when the thought also weighs what to do (a
# decision term, a yes/no question on what to do, options, a plan, ideas, a revision, a branch, a doubt).
LOOKUP_TERMS: dict[str, str] = {
    "en": "what does, how often, ballpark, roughly, approximately, per dose, per person, per head, per student, "
    "per unit, when, where, "
    "who, what date, what time, what year, what version, on what date, by when, is that right, "
    "is this right, am i right, which, what's, what is, what are, what was, how many, how much, how long, total, "
    "in total, correct",
    "de": "überschlagen, ungefähr, pro kopf, pro person, pro kind, wann, wo, wer, bis wann, ab wann, seit wann, "
    "welches datum, stimmt es, welche, welcher, welches, welchen, "
    "welchem, wie viel, wie viele, wie lange, insgesamt, summe, "
    "was kostet, was kosten, stimmt das, richtig",
    "es": "qué alumnos, qué valores, qué filas, qué días, a qué hora, qué prueba, qué test, aproximadamente, "
    "más o menos, por alto, por persona, por cabeza, "
    "por alumno, cuándo, dónde, quién, "
    "hasta cuándo, qué fecha, qué día, qué hora, es así, cuál, cuáles, qué cláusula, "
    "qué línea, cuánto, cuánta, cuántos, cuántas, en total, total, es correcto, "
    "correcto",
    "fr": "environ, à peu près, grosso modo, par personne, par élève, par tête, quand, où, qui, jusqu'à quand, "
    "à partir de quand, quelle date, c'est bien, c'est exact, quel, quelle, "
    "quels, quelles, lequel, laquelle, combien, au total, total, c'est bien ça, correct",
    "pt": "que horas, a que horas, em que dia, aproximadamente, por alto, por pessoa, por cabeça, por aluno, "
    "quando, onde, quem, até quando, que dia, "
    "que data, está certo isso, certo, qual, quais, quanto, quanta, "
    "quantos, quantas, no total, total, mais ou menos quanto, está certo, correto",
    "zh": "粗略, 人均, 每人, 什么时候, 哪天, 几号, 何时, 对不对, 是不是这样, 哪, "
    "多少, 几辆, 几台, 几天, 几个月, 几年, 几次, 几点, 几号, 几位, 几名, 几张, 几间, 一共, 总共, 合计, 对吗, 是多少",
    "ja": "何時間, 何日, 何円, ざっくり, およそ, 概算, 一人あたり, 1人あたり, いつ, どこ, 誰, 合ってる, "
    "合っていますか, 正しい, どの, 第何, 何条, 何行, いくら, いくつ, 何人, 何件, 何個, 合計, 足りる",
}
REQUEST_TERMS: dict[str, str] = {
    "en": "draft, write up, fill in, add up, sum up, work out the, do the math, do the sum, look up, pull out, "
    "extract, find, list, calculate, compute, convert, tell me, show me",
    "de": "fass bitte, fasse bitte, fass die, fasse die, zusammenfassen, rechne, rechne nach, formuliere, entwirf, "
    "trag, finde, suche heraus, liste, berechne, rechne aus, "
    "ermittle, sag mir, sagen sie mir, zeig mir",
    "es": "cálculo rápido, cálculo de, haz la cuenta, haz el cálculo, redacta, saca, busca, extrae, lista, calcula, "
    "calcular, dime, dígame, "
    "indícame",
    "fr": "donne-moi, donnez-moi, liste-moi, calcule-moi, fais le calcul, fais le compte, rédige, trouve, extrais, "
    "liste, calcule, "
    "calculer, dites-moi, dis-moi, "
    "indiquez-moi",
    "pt": "resume, resuma, resumir, me lista, lista, calcula, só me lista, faz a conta, faça a conta, "
    "faz o cálculo, redija, redige, "
    "encontre, extraia, liste, calcule, calcular, "
    "diga-me, me diga, me diz, indique",
    "zh": "挑出来, 挑出, 找一下, 标一下, 先确认, 想先确认, 先查, 确认一下, 确认个事, 查点资料, 总结一下, 归纳一下, "
    "列一下, 算一算, 帮我查, "
    "查一下, 核对一下, 找出, 列出, 定位, 看一下是, 算一下, 帮我算",
    "ja": "まず確認, 先に確認, 確認させて, まとめて, 挙げて, 一覧にして, 確認して, 調べて, 抜き出, 教えて, "
    "確認したい, 計算して",
}
# A short question that asks how to act ("Como conduzo?") is not a sum, however many numbers come before it.
# A request passed on or narrowed down, anywhere in a sentence that asks no question: "Marta wants to know which
# month it is booked in", "La directora quiere saber cuánto cobramos", "Só preciso saber quais variáveis...".
RELAYED_TERMS: dict[str, str] = {
    "en": "wants to know, want to know, wanted to know, needs to know, asks how, asks what, asks which, asks for, "
    "asked me for, asked me to check, just list, i just need, i only need, all i need, just need one, need one fact",
    "de": "will wissen, möchte wissen, wollen wissen, wissen möchte, fragt, brauche nur, nur wissen, nur kurz",
    "es": "quiere saber, quieren saber, pregunta, me pide, me piden, solo necesito, sólo necesito, necesito saber",
    "fr": "veut savoir, veulent savoir, voudrait savoir, demande, veut le, j'ai juste besoin, il me faut juste",
    "pt": "quer saber, querem saber, pergunta, pediu, só preciso, preciso saber, só quero saber",
    "zh": "想知道, 问我, 想问, 问一下, 只需要, 让我算, 让我查",
    "ja": "知りたい, 聞かれ, 確認してほしい, だけ知りたい, 出してほしい",
}
HOW_TERMS: dict[str, str] = {
    "en": "how, what, who, should, do, can",
    "de": "wie, was, wer, soll, sollen",
    "es": "cómo, qué, quién, debo, debemos",
    "fr": "comment, que, quoi, qui, dois, doit",
    "pt": "como, que, quem, devo, devemos",
    "zh": "怎么, 如何, 咋, 该, 要不要",
    "ja": "どう, べき",
}
# Words that state a next step only when they open a sentence or a clause ("Next on the checklist: ...",
# "Jetzt Kernel-Update einspielen, ...", "Continue with periods 5 and 6"), not inside one ("the next quarter").
STEP_OPENERS: dict[str, str] = {
    "en": "next, now, continue with, moving on to, doing that now",
    "de": "jetzt, nun, weiter mit",
    "es": "ahora, sigo con, siguiente",
    "fr": "maintenant, je continue avec, je passe à",
    "pt": "agora, sigo com, próximo",
    "zh": "现在, 接下来",
    "ja": "次に, これから, 続いて",
}
STEP_TERMS: dict[str, str] = {
    "en": "the next step is, next i just, i'll do that first, i'm doing that now, the only task is, right now i'll, "
    "first step:, next i'll, next i, for now i'll, now i'll, i'll now, "
    "then i'll, my next step, all that's left is, "
    "what's left is, next:, next step, next up, the next thing",
    "de": "als nächstes nur, ich mache das jetzt, ich führe jetzt, ich trage jetzt, ich mache jetzt, ich fange mit, "
    "erster schritt, jetzt muss ich nur, "
    "ich kümmere mich nur um, nächster schritt ist, als nächstes, als nächstes, "
    "nächster schritt, nächste schritt, als nächster schritt",
    "es": "ahora me toca, me toca ahora, solo toca, por ahora toca, primer paso, lo próximo, ahora toca, "
    "queda mandar, hago eso ahora, "
    "ahora voy a, siguiente paso, próximo paso, "
    "lo siguiente, a continuación",
    "fr": "je fais ça maintenant, je m'en occupe maintenant, suivant :, première étape, je vais maintenant, "
    "il me reste à, maintenant je, prochaine étape, "
    "étape suivante",
    "pt": "falta eu, falta só eu, próximo passo é, o próximo passo é só, faço isso agora, primeiro passo, "
    "agora é só, agora é, agora vou, falta só, o próximo passo é, próximo passo, a seguir",
    "zh": "我先做这一步, 我先做这个, 先做这一步, 第一步：, 操作很简单, 我这一步, 我现在要做的, 这一步只需要, "
    "现在要做的就是, 下一步, 接下来",
    "ja": "次：, 次:, 今やること, 今のステップ, 次にやること, 次は, 次のステップ, 次の作業, 次にやる",
}

# Round 9: options, hypotheses and doubts stated, not asked ("We could batch it nightly, or stream it", "It might be
# the retry policy; it could also be DNS", "I can't tell yet"). Read by structure (reading._stated): a possibility
# word and then an "or" in one sentence, two possibilities in one thought, paired "either ... or" words, options
# counted ("two ways to ..."), or a doubt in the writer's own voice. These tables hold only the marker words.
POSSIBILITY_TERMS: dict[str, str] = {
    "en": "could, might, maybe, perhaps, possibly, may be, may have, may come, may also, can either, could also, "
    "might also",
    "de": "könnte, könnten, vielleicht, möglicherweise, eventuell, womöglich, kann sein, kann auch",
    "es": "podría, podrían, podríamos, puede que, puede ser, quizá, quizás, tal vez, a lo mejor, igual es",
    "fr": "pourrait, pourraient, pourrions, pourrait-on, peut-être, il se peut, se peut, on peut soit",
    "pt": "poderia, poderiam, poderíamos, pode ser, pode ter, talvez, possivelmente",
    "zh": "可能, 也许, 或许, 说不定",
    "ja": "かもしれ, 可能性, だろうか, のではないか, かも。, 考えられる",
}
DOUBT_TERMS: dict[str, str] = {
    "en": "not sure, unsure, can't tell, cannot tell, can't say, hard to say, unclear, not clear, don't know yet, "
    "don't know which, don't know whether, don't know if, no idea, not certain, uncertain, i doubt, torn between, "
    "undecided, on the fence, can't decide, not convinced, second-guess*, second guess*, i wonder, wondering whether, "
    "wondering if, not so sure, not entirely sure, having doubts, i have doubts, inconclusive, not conclusive, "
    "could be noise, might be noise",
    "de": "nicht sicher, unsicher, unklar, nicht klar, weiß nicht, weiß noch nicht, weiß ich nicht, schwer zu sagen, "
    "keine ahnung, zweifle, zweifel, bin hin- und hergerissen, nicht überzeugt, ich frage mich, nicht mehr sicher, "
    "nicht eindeutig, nicht aussagekräftig",
    "es": "no estoy segur*, no sé, no lo sé, no está claro, no tengo claro, no sabría, difícil de decir, dudo, "
    "tengo dudas, no me convence, no lo tengo claro, me pregunto si, no estoy tan segur*, "
    "no son concluyentes, no es concluyente, poco concluyente*",
    "fr": "pas sûr*, je ne sais pas, je ne sais plus, pas clair, incertain*, difficile à dire, j'hésite, je doute, "
    "pas convaincu*, je me demande si, pas si sûr*, pas concluant*, peu concluant*, non concluant*",
    "pt": "não tenho certeza, não sei, não está claro, não dá para saber, não consigo dizer, difícil dizer, "
    "tenho dúvida*, incerto, não estou convencid*, estou em dúvida, me pergunto se, fico em dúvida, "
    "não são conclusivos, não é conclusivo, inconclusiv*",
    "zh": "不确定, 说不准, 说不好, 不清楚是, 拿不准, 不好说, 不敢肯定, 判断不了, 还不知道, 没把握, 犹豫, "
    "有点怀疑, 我怀疑, 没有定论, 还没定论",
    "ja": "分からない, わからない, 判断がつかない, 判断できない, 確信がない, 自信がない, 迷って, はっきりしない, "
    "見当がつかない, 結論が出ない, 決め手がない",
}
# Options counted or named as such: "two ways to ship", "option A ... option B", "zwei Varianten", "方案一".
OPTION_COUNTS: dict[str, str] = {
    "en": r"\b(?:two|three|2|3) (?:\w+ ){0,2}(?:ways|options|approaches|paths|choices|alternatives|routes|candidates|"
    r"designs|plans|strategies)\b|\b(?:option|plan|approach|variant) (?:a|b|1|2|one|two)\b",
    "de": r"\b(?:zwei|drei|2|3) (?:\w+ ){0,2}(?:wege|optionen|möglichkeiten|varianten|ansätze|alternativen|"
    r"lösungen|pläne)\b|\b(?:option|variante|plan) (?:a|b|1|2|eins|zwei)\b",
    "es": r"\b(?:dos|tres|2|3) (?:\w+ ){0,2}(?:opciones|caminos|formas|alternativas|vías|enfoques|planes|"
    r"soluciones)\b|\b(?:opción|plan|alternativa) (?:a|b|1|2)\b",
    "fr": r"\b(?:deux|trois|2|3) (?:\w+ ){0,2}(?:options|solutions|façons|pistes|voies|possibilités|approches|"
    r"scénarios|plans)\b|\b(?:option|plan|scénario|piste) (?:a|b|1|2)\b",
    "pt": r"\b(?:duas|dois|três|2|3) (?:\w+ ){0,2}(?:opções|formas|alternativas|abordagens|caminhos|saídas|planos|"
    r"soluções)\b|\b(?:opção|plano|alternativa) (?:a|b|1|2)\b",
    "zh": r"[两二三2-3](?:个|种|条|套)(?:\w{0,2})?(?:方案|选择|办法|路|思路|选项|候选|人选)|方案[一二ab12]|[ab]方案",
    "ja": r"[二三2-3２３]つの(?:案|選択肢|方法|やり方|方針|候補)|(?:案|候補|選択肢)は[二三2-3２３]つ"
    r"|[ab]案|案[ab12]|二択",
}
# Paired words that state alternatives in a statement: "either ... or", "entweder ... oder", "soit ... soit".
CORRELATIVES: dict[str, str] = {
    "en": r"\beither\b.{1,200}?\bor\b|\bwhether\b.{1,200}?\bor\b",
    "de": r"\bentweder\b.{1,200}?\boder\b|\bob\b.{1,200}?\boder\b",
    "es": r"\bo bien\b|\bya sea\b.{1,200}?\bo\b|(?:^|[,:;] )o\b.{1,120}?\bo\b(?! \d)|\bsi\b.{1,150}?\bo si\b",
    "fr": r"\bsoit\b.{1,200}?\bsoit\b|\bou bien\b|\bsi\b.{1,150}?\bou si\b",
    "pt": r"(?:^|[,:;] )ou\b.{1,120}?\bou\b(?! \d)|\bou então\b|\bse\b.{1,150}?\bou se\b",
    "zh": r"要么.{1,60}?要么|或者|是[^。？]{1,40}?[，,]\s*还是",
    "ja": r"それとも|あるいは|もしくは|のか、.{1,60}?のか",
}
