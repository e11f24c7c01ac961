#!/usr/bin/env python3
"""Write project-authored decision examples for fine-tuning the cross-encoder (issue 12).

Every text below (situations, review sentences, posts, tickets, questions, option
descriptions, scale wordings) was written by the project for this purpose. Nothing was
taken from eval/dev or from any public data set. Examples are composed from hand-written
parts whose labels are known, so the gold label follows from how the example is built.

Standard library only; fixed seed; deterministic output.
Run:  /usr/bin/python3 scripts/author-decision-examples.py
Writes training/authored/examples.jsonl
"""
import collections
import json
import os
import random
import sys

SEED = 120612
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "training", "authored")

# --------------------------------------------------------------------------------------
# Question factories. Each returns a function (attrs, rng) -> (type, instructions,
# criteria, label) or None when the question does not apply to this state.
# --------------------------------------------------------------------------------------

EMPTY_DESC_RATE = 1 / 3


def pick(rng, xs):
    return xs[rng.randrange(len(xs))]


def choice_q(attr, phrasings, pool, min_opts=2, max_opts=8, null_rate=0.0, also_attr=None, cond=None):
    """pool: key -> list of description variants. Distractors never include keys in attrs[also_attr]."""
    def make(attrs, rng):
        gold = attrs.get(attr)
        if gold is None or gold not in pool:
            return None
        if cond is not None and not cond(attrs):
            return None
        banned = set(attrs.get(also_attr or (attr + "_also"), []) or [])
        others = [k for k in pool if k != gold and k not in banned]
        if not others:
            return None
        hi = min(max_opts, len(others) + 1)
        lo = min(min_opts, hi)
        n = rng.randint(lo, hi)
        keys = [gold] + rng.sample(others, n - 1)
        rng.shuffle(keys)
        empty = rng.random() < EMPTY_DESC_RATE
        crit = {k: ("" if empty else pick(rng, pool[k])) for k in keys}
        instr = None if rng.random() < null_rate else pick(rng, phrasings)
        return ("choice", instr, crit, gold)
    return make


def score_q(attr, phrasings, scales, null_rate=0.0):
    """scales: list of (levels, mapping or None); mapping sends the attribute's value to a level index."""
    def make(attrs, rng):
        v = attrs.get(attr)
        if v is None:
            return None
        levels, mapping = pick(rng, scales)
        idx = mapping[v] if mapping else v
        if idx is None or not (0 <= idx < len(levels)):
            return None
        instr = None if rng.random() < null_rate else pick(rng, phrasings)
        return ("score", instr, list(levels), idx)
    return make


def noul_bool(attr, phrasings, meanings, meaning_rate=0.7):
    def make(attrs, rng):
        v = attrs.get(attr)
        if v is None:
            return None
        crit = None
        if meanings and rng.random() < meaning_rate:
            t, f = pick(rng, meanings)
            crit = {"true": t, "false": f}
        return ("noul", pick(rng, phrasings), crit, bool(v))
    return make


def noul_cat(attr, per_value, meaning_rate=0.7, also_attr=None):
    """per_value: value -> (phrasings, meanings). Asks 'is it <value>?' for the gold value half the time."""
    def make(attrs, rng):
        gold = attrs.get(attr)
        if gold is None:
            return None
        banned = set(attrs.get(also_attr or (attr + "_also"), []) or [])
        if gold in per_value and rng.random() < 0.5:
            target = gold
        else:
            others = [k for k in per_value if k != gold and k not in banned]
            if not others:
                return None
            target = pick(rng, others)
        phr, mean = per_value[target]
        crit = None
        if mean and rng.random() < meaning_rate:
            t, f = pick(rng, mean)
            crit = {"true": t, "false": f}
        return ("noul", pick(rng, phr), crit, target == gold)
    return make


def fixed_qs():
    """For builders that return their own questions in attrs['_qs']."""
    def make(attrs, rng):
        qs = attrs.get("_qs") or []
        if not qs:
            return None
        q = pick(rng, qs)
        kind = q[0]
        if kind == "noul":
            _, instr, label = q[:3]
            crit = None
            if len(q) > 3 and q[3] and rng.random() < 0.5:
                crit = {"true": q[3][0], "false": q[3][1]}
            return ("noul", instr, crit, bool(label))
        if kind == "choice":
            _, instr, opts, gold = q
            keys = list(opts)
            rng.shuffle(keys)
            empty = rng.random() < EMPTY_DESC_RATE
            return ("choice", instr, {k: ("" if empty else opts[k]) for k in keys}, gold)
        if kind == "score":
            _, instr, levels, idx = q
            return ("score", instr, list(levels), idx)
        raise ValueError(kind)
    return make


def wrap_state(text, rng, senders, channels, rate):
    if rng.random() < rate:
        return {"from": pick(rng, senders), "channel": pick(rng, channels), "message": text}
    return text


def join(*parts):
    return " ".join(p.strip() for p in parts if p and p.strip())


# --------------------------------------------------------------------------------------
# Registry of (domain, lang) generators: builder(rng) -> (state, attrs); questions list.
# --------------------------------------------------------------------------------------
GENS = []


def register(domain, lang, n, builder, questions, max_uses=2):
    GENS.append(dict(domain=domain, lang=lang, n=n, builder=builder, questions=questions, max_uses=max_uses))

# ======================================================================================
# SUPPORT ROUTING
# ======================================================================================
SUPPORT = {}

SUPPORT["en"] = dict(
    cores={
        "billing": [
            ("I was charged twice for the March plan, once on the 2nd and again on the 4th. Please refund the second charge.", dict(refund=True)),
            ("My card statement shows $59 from you, but I downgraded to the $29 plan last month.", {}),
            ("Can you switch our invoices from monthly to yearly billing and send the next one to accounts@ our domain instead of to me?", {}),
            ("The receipt you emailed lists the wrong company name. It should say Hollis & Dean Ltd, not my personal name.", {}),
            ("I cancelled the trial within the seven days but still got billed for a full month. I'd like that money back.", dict(refund=True)),
            ("Why did my renewal price go up from 12 to 18 euros? I didn't get any notice about a price change.", {}),
            ("Our payment failed because the company card expired. How do I add the new card before the account is suspended?", {}),
            ("We paid the invoice by bank transfer ten days ago but your system still marks it as unpaid.", {}),
            ("Could you add our VAT number to future invoices? We are a registered business in Ireland.", {}),
            ("There's a charge called 'service adjustment' on this month's bill that I don't recognise. What is it for?", {}),
            ("I was billed for five seats but only three people on our team use the tool. Please credit the difference back to my card.", dict(refund=True)),
            ("Is it possible to pay by PayPal instead of credit card from the next billing cycle on?", {}),
            ("The coupon code SPRING20 was accepted at checkout but the discount never appeared on the charge.", {}),
        ],
        "technical": [
            ("The desktop app crashes as soon as I open the export menu. I've reinstalled it twice already.", {}),
            ("Since yesterday's update, the sync between my phone and laptop stops after a few files.", {}),
            ("Our webhook endpoint receives the events, but the signature check fails on every single one.", {}),
            ("When I upload a CSV with more than 10,000 rows, the import spinner runs forever and nothing happens.", {}),
            ("The smart thermostat shows 'offline' in the app even though it's connected to the same Wi-Fi as my phone.", {}),
            ("Printing from the web dashboard produces blank pages in Firefox. Chrome works fine.", {}),
            ("The API returns a 500 error whenever the description field contains an emoji.", {}),
            ("My camera's motion alerts arrive about ten minutes late, which makes them pretty useless.", {}),
            ("Dark mode turns itself off every time I restart the app on my tablet.", {}),
            ("The barcode scanner in your mobile app can't read codes on glossy packaging.", {}),
            ("After connecting the new router, the doorbell chimes but the video feed never loads.", {}),
            ("Calendar invites created in your tool show up one hour off for colleagues in other time zones.", {}),
            ("Search returns no results for any word with an accent, for example 'café' or 'résumé'.", {}),
        ],
        "sales": [
            ("We're a team of about 60 designers looking at your enterprise plan. Could someone walk us through pricing?", {}),
            ("Do you offer a discount for non-profit organisations? We're a small animal shelter.", {}),
            ("I'd like a quote for 25 licences with on-premise hosting and priority support.", {}),
            ("Is there a way to try the premium features for a couple of weeks before we commit to buying?", {}),
            ("Our school district is comparing three vendors. Can you send a product sheet and a price list?", {}),
            ("What's the difference between the Growth and Scale plans? We need SSO and audit logs.", {}),
            ("We're interested in reselling your hardware in Portugal. Who can we talk to about a partnership?", {}),
            ("Could we get a demo next week for our operations director before we decide?", {}),
            ("If we sign up for three years instead of one, is there a better rate?", {}),
            ("Do you sell the sensors in bulk? We'd need around 400 units for our warehouses.", {}),
            ("I run a small bakery and I'm thinking of buying your POS system. Does it include a card reader?", {}),
            ("Can we buy extra storage on its own without upgrading the whole plan?", {}),
        ],
        "account": [
            ("I can't log in because the verification code never arrives on my phone.", {}),
            ("Please change the email address on my profile; I no longer have access to the old one.", {}),
            ("I'd like to delete my account and all the data linked to it.", {}),
            ("Our previous admin left the company. How do we transfer admin rights to a new person?", {}),
            ("My account was locked after too many password attempts. How long until I can try again?", {}),
            ("Can I merge my two accounts? I accidentally registered once with Google and once with my email.", {}),
            ("I changed phones and lost my authenticator app, so I can't get past two-factor login.", {}),
            ("How do I change the username that appears on my public profile?", {}),
            ("Someone on our team needs read-only access. Where can I set up that role?", {}),
            ("The password reset link says it has expired even though I clicked it straight away.", {}),
            ("I want to rename our workspace from 'Test Team' to our actual company name.", {}),
            ("Please remove my old work address from the account; I only want to use my personal one now.", {}),
        ],
        "shipping": [
            ("The tracking page has said 'label created' for six days. Has my parcel actually been sent?", {}),
            ("My package was marked as delivered but it isn't at my door or with the neighbours.", {}),
            ("Can I change the delivery address? I'm moving this weekend and the order hasn't shipped yet.", {}),
            ("The box arrived crushed and two of the mugs inside were broken. I'd like a refund for those two.", dict(refund=True)),
            ("Do you ship to the Canary Islands, and if so, how long does it usually take?", {}),
            ("Only one of the three items I ordered came in the parcel. Where are the other two?", {}),
            ("The courier left a note saying they'll try again, but I'm not home on weekdays. Can I pick it up instead?", {}),
            ("I paid for express delivery but the order took nine days. Please refund the shipping fee.", dict(refund=True)),
            ("Could you hold my order at the depot until I'm back from holiday?", {}),
            ("The parcel was sent to my old address even though I updated it in my profile before ordering.", {}),
            ("Is it possible to combine my two recent orders into one shipment?", {}),
            ("The customs office is asking me for an invoice before they release the parcel. Can you send one?", {}),
        ],
        "careers": [
            ("I'm applying for the junior data analyst position. Is the role open to remote candidates?", {}),
            ("I had my second interview with your team last Tuesday. Is there any update on the hiring decision?", {}),
            ("Do you offer summer internships for engineering students?", {}),
            ("I'd like to withdraw my application for the warehouse supervisor opening, as I've accepted another offer.", {}),
            ("Could you tell me whether the customer success role requires a second language?", {}),
            ("I uploaded the wrong CV with my application. Can I send an updated version?", {}),
            ("Are you hiring delivery drivers in the Leeds area at the moment?", {}),
            ("I saw your job post for a UX designer. What does the interview process look like?", {}),
            ("I'm a former employee and need a reference letter for a new job. Who should I ask?", {}),
            ("Is the salary range for the senior backend developer opening published anywhere?", {}),
            ("My recruiter contact has left. Who is handling my application for the logistics coordinator role now?", {}),
            ("Do you accept speculative applications from nurses for your occupational health team?", {}),
        ],
    },
    greet=["Hi,", "Hello,", "Hello there,", "Good morning,", "Hi team,", "Dear support,", "Hey,", "Good afternoon,"],
    ref=["My order number is {n}.", "Order ref: {n}.", "Reference #{n}.", "The invoice number is INV-{n}.", "Customer ID {n}, in case you need it.", "Ticket from earlier: {n}."],
    deadline=[
        "I need this sorted before Friday.", "Please get back to me by the end of the month.", "Our audit is on the 14th, so I need an answer before then.",
        "I need it fixed before our launch on Monday.", "Could you reply by Wednesday noon?", "Our finance team closes the books on the 30th.",
        "It has to be done before I travel on the 3rd.", "I need a decision before our board meeting next Thursday.",
    ],
    tone={
        0: ["Thanks in advance!", "Thanks so much for your help.", "Have a nice day.", "Appreciate it!", "Many thanks.", ""],
        1: ["It's a little annoying, to be honest.", "I'd appreciate a faster reply than last time.", "Slightly irritating, but I'm sure it's an easy fix.",
            "It's not the end of the world, but it's a bit of a nuisance.", "I was hoping this would just work, so this is a bit disappointing."],
        2: ["This is really frustrating and it's wasting a lot of my time.", "I've explained this twice already and it's still not fixed, which is very frustrating.",
            "Honestly, I'm fed up with having to chase this.", "I'm getting really annoyed that nobody has looked at this properly.",
            "This keeps happening and my patience is wearing thin."],
        3: ["This is completely unacceptable. Fix it today or I'm cancelling and posting a review everywhere I can.",
            "I am furious. Third message, zero help. Put me through to a manager NOW.",
            "Absolutely ridiculous service. If this isn't resolved within the hour I'm disputing every charge with my bank.",
            "I'm done being polite. Sort this out immediately or I'm taking my business and my whole team elsewhere.",
            "Worst experience I've ever had with a company. I want this escalated to someone senior right now."],
    },
    signoff=["Thanks, Priya", "Best, Tom", "Regards, M. Okafor", "Cheers, Lena", "Kind regards, Daniel", "— Sofia"],
    senders=["Priya", "Tom Becker", "lena.k", "Daniel O.", "Sofia", "Marcus", "Aiko"],
    channels=["email", "chat", "web form", "app"],
)


def support_builder(C):
    def build(rng):
        dept = pick(rng, sorted(C["cores"]))
        text, extra = pick(rng, C["cores"][dept])
        # enquiries from prospects and applicants are written calm or mildly impatient only
        level = rng.randrange(2) if dept in ("sales", "careers") else rng.randrange(4)
        attrs = dict(dept=dept, refund=False, deadline=False, ref=False, frustration=level)
        attrs.update(extra)
        pre, mid = [], []
        if rng.random() < 0.4:
            pre.append(pick(rng, C["greet"]))
        if rng.random() < 0.35:
            mid.append(pick(rng, C["ref"]).format(n=rng.randint(10000, 999999)))
            attrs["ref"] = True
        if rng.random() < 0.4:
            mid.append(pick(rng, C["deadline"]))
            attrs["deadline"] = True
        rng.shuffle(mid)
        tone = pick(rng, C["tone"][level])
        parts = pre + [text] + mid
        if level >= 2 and rng.random() < 0.35:
            parts = pre + [tone, text] + mid
        else:
            parts.append(tone)
        if rng.random() < 0.2 and level < 3:
            parts.append(pick(rng, C["signoff"]))
        body = join(*parts[len(pre):]) if pre else join(*parts)
        state = wrap_state((pre[0] + "\n" + body) if pre else body, rng, C["senders"], C["channels"], 0.12)
        return state, attrs
    return build


SUPPORT_Q = {}
SUPPORT_Q["en"] = dict(
    dept_phr=["Which team should pick up this ticket?", "Route this message to the right queue.", "Who in the company should answer this?",
              "Where should this request be sent internally?", "Pick the inbox this email belongs in.", "Which group is responsible for this message?"],
    dept_pool={
        "billing": ["Charges, invoices, refunds and payment methods", "Money matters: bills, receipts and payments"],
        "technical": ["Bugs, errors and things that don't work as expected", "Product problems, crashes and troubleshooting"],
        "sales": ["Prospective buyers asking about plans, quotes or demos", "New business: pricing questions and purchase enquiries"],
        "account": ["Logins, passwords, profile details and user permissions", "Access to the account and changes to its settings"],
        "shipping": ["Parcels, deliveries, tracking and addresses", "Getting physical orders to the customer"],
        "careers": ["Job openings, applications and interviews", "Recruiting and candidates"],
        "legal": ["Contracts, terms and legal complaints", "Lawyers, compliance and formal disputes"],
        "press": ["Journalists and media enquiries", "Interview requests from the press"],
    },
    frus_phr=["How annoyed does the writer sound?", "Rate the emotional temperature of this message.", "What is the customer's mood?",
              "How upset is the sender?", "Place this message on the anger scale."],
    frus_scales=[
        (["Calm and friendly", "A little irritated", "Clearly frustrated", "Furious, threatening to leave or escalate"], None),
        (["No annoyance at all", "Mild impatience", "Open frustration about the problem", "Extreme anger with demands or threats"], None),
        (["Relaxed", "Slightly bothered", "Annoyed and complaining", "Enraged"], None),
        (["Calm", "Unhappy but measured", "Furious or threatening"], {0: 0, 1: 1, 2: 1, 3: 2}),
    ],
    deadline_phr=["Does the sender give a date or day by which they need this?", "Is there a time limit mentioned in the message?",
                  "Does the writer set a due date?", "Is a cut-off date given?"],
    deadline_mean=[("A specific day, date or event by which they need an answer is stated", "No time limit is stated"),
                   ("The message names a due date", "No due date appears")],
    ref_phr=["Does the message include an order, invoice or customer number?", "Is a reference number given?", "Did the customer quote an ID we can look up?"],
    ref_mean=[("Some reference number is included", "No number to look up is included")],
    refund_phr=["Does the customer want money returned?", "Is a refund being requested here?", "Is the writer asking to get money back?"],
    refund_mean=[("They ask for some or all of their money back", "They do not ask for money back")],
    dept_noul={
        "billing": (["Is this about a charge or an invoice?", "Should finance handle this one?"], [("The message is about payments, charges or invoices", "It is about something else")]),
        "technical": (["Is the customer describing something that's broken?", "Does this need a troubleshooting engineer?"], [("A product fault or error is described", "No product fault is described")]),
        "sales": (["Is this a potential new purchase?", "Should the sales team reply to this?"], [("The sender is interested in buying or pricing", "The sender is not asking to buy anything")]),
        "account": (["Is this about logging in or account settings?", "Does the request concern account access?"], [("It concerns login, profile or permissions", "It does not concern account access or settings")]),
        "shipping": (["Is this about a delivery?", "Does the message concern a parcel?"], [("It is about shipping, delivery or a parcel", "It is not about a delivery")]),
        "careers": (["Is the sender a job applicant?", "Is this about a job opening?"], [("It is about a job, application or interview", "It has nothing to do with jobs")]),
    },
)


def support_questions(Q):
    return [
        (3, choice_q("dept", Q["dept_phr"], Q["dept_pool"], null_rate=0.08)),
        (2, score_q("frustration", Q["frus_phr"], Q["frus_scales"])),
        (1, noul_bool("deadline", Q["deadline_phr"], Q["deadline_mean"])),
        (1, noul_bool("ref", Q["ref_phr"], Q["ref_mean"])),
        (1, noul_bool("refund", Q["refund_phr"], Q["refund_mean"])),
        (1.5, noul_cat("dept", Q["dept_noul"])),
    ]

SUPPORT["es"] = dict(
    cores={
        "billing": [
            ("Me habéis cobrado dos veces la cuota de abril. Quiero que me devolváis el segundo cargo.", dict(refund=True)),
            ("En el extracto del banco aparece un cargo de 45 euros que no reconozco. ¿A qué corresponde?", {}),
            ("Necesito que las facturas salgan a nombre de la empresa y no a mi nombre personal.", {}),
            ("Di de baja la prueba gratuita a tiempo y aun así me cobraron el mes completo. Pido el reembolso.", dict(refund=True)),
            ("¿Puedo cambiar la forma de pago a domiciliación bancaria a partir del mes que viene?", {}),
            ("Pagamos la factura por transferencia hace una semana y en vuestra web sigue como pendiente.", {}),
            ("¿Por qué ha subido el precio de la renovación si nadie me avisó?", {}),
        ],
        "technical": [
            ("Cada vez que adjunto una foto, la app se cierra de golpe.", {}),
            ("Desde la última actualización no se sincronizan los contactos entre el móvil y el ordenador.", {}),
            ("Al exportar el informe a PDF salen las tablas cortadas por la mitad.", {}),
            ("El termostato aparece desconectado en la app aunque la wifi funciona perfectamente.", {}),
            ("La API nos devuelve un error 500 cuando el nombre del cliente lleva tilde.", {}),
            ("Las notificaciones del timbre llegan con varios minutos de retraso.", {}),
            ("No carga el mapa en la versión de escritorio; solo se ve un recuadro gris.", {}),
        ],
        "sales": [
            ("Somos una academia con 30 profesores y nos interesa el plan para equipos. ¿Nos podéis pasar un presupuesto?", {}),
            ("¿Tenéis descuentos para asociaciones sin ánimo de lucro?", {}),
            ("Querríamos ver una demostración antes de decidir la compra. ¿Qué días tenéis disponibles?", {}),
            ("¿Qué diferencia hay entre el plan Básico y el Profesional? Necesitamos informes avanzados.", {}),
            ("Tengo una cadena de tres cafeterías y estoy pensando en comprar vuestro sistema de caja.", {}),
            ("Si contratamos dos años de golpe, ¿el precio mensual baja?", {}),
        ],
        "account": [
            ("No puedo entrar en mi cuenta porque no me llega el código de verificación.", {}),
            ("Quiero cambiar el correo asociado a mi perfil, ya no uso el antiguo.", {}),
            ("Por favor, borrad mi cuenta y todos mis datos personales.", {}),
            ("La persona que administraba la cuenta ya no trabaja con nosotros. ¿Cómo paso los permisos a otra compañera?", {}),
            ("Se me ha bloqueado la cuenta tras varios intentos fallidos de contraseña.", {}),
            ("El enlace para restablecer la contraseña dice que ha caducado nada más abrirlo.", {}),
        ],
        "shipping": [
            ("El seguimiento lleva cinco días diciendo 'en preparación'. ¿Han enviado ya mi pedido?", {}),
            ("Figura como entregado, pero el paquete no está ni en casa ni en la portería.", {}),
            ("¿Puedo cambiar la dirección de entrega? Todavía no ha salido del almacén.", {}),
            ("La caja llegó aplastada y el jarrón venía roto. Quiero que me devolváis el importe.", dict(refund=True)),
            ("Solo me ha llegado uno de los dos artículos que pedí.", {}),
            ("¿Hacéis envíos a Andorra? ¿Cuánto tardan más o menos?", {}),
        ],
        "careers": [
            ("Me gustaría saber si la vacante de técnico de laboratorio sigue abierta.", {}),
            ("Hice la segunda entrevista la semana pasada y aún no sé nada. ¿Hay novedades?", {}),
            ("¿Ofrecéis prácticas de verano para estudiantes de ingeniería?", {}),
            ("Adjunté un currículum antiguo por error. ¿Puedo mandar la versión actualizada?", {}),
            ("Retiro mi candidatura al puesto de administrativo porque he aceptado otra oferta.", {}),
            ("¿El puesto de atención al cliente permite teletrabajo?", {}),
        ],
    },
    greet=["Hola,", "Buenos días,", "Buenas tardes,", "Hola, equipo:", "Estimados señores:"],
    ref=["Mi número de pedido es el {n}.", "Referencia: {n}.", "Factura n.º {n}.", "Mi número de cliente es {n}."],
    deadline=["Lo necesito resuelto antes del viernes.", "Por favor, respondedme antes de fin de mes.", "Tenemos una auditoría el día 12 y necesito la respuesta antes.",
              "Tiene que estar listo antes del lanzamiento del lunes.", "Me voy de viaje el día 3, así que necesito saberlo antes."],
    tone={
        0: ["¡Muchas gracias de antemano!", "Gracias por la ayuda.", "Un saludo.", ""],
        1: ["Es un poco molesto, la verdad.", "Agradecería una respuesta algo más rápida que la última vez.", "No es grave, pero resulta algo incómodo."],
        2: ["Esto es muy frustrante y me está haciendo perder mucho tiempo.", "Ya lo he explicado dos veces y sigue sin solucionarse.", "Estoy bastante harto de tener que insistir."],
        3: ["Es totalmente inaceptable. O lo arregláis hoy o me doy de baja y lo cuento en todas partes.",
            "Estoy indignado. Tercer mensaje y ninguna ayuda. Quiero hablar ya con un responsable.",
            "Un servicio vergonzoso. Si no se resuelve hoy mismo, reclamo todos los cargos al banco."],
    },
    signoff=["Saludos, Lucía", "Gracias, Andrés", "Un abrazo, Carmen"],
    senders=["Lucía", "Andrés Gil", "Carmen R."],
    channels=["email", "chat", "formulario web"],
)

SUPPORT["pt"] = dict(
    cores={
        "billing": [
            ("Fui cobrado duas vezes pela mensalidade de maio. Peço o reembolso da segunda cobrança.", dict(refund=True)),
            ("Apareceu na fatura do cartão um valor de 89 reais que não reconheço. A que se refere?", {}),
            ("Preciso que a nota fiscal saia em nome da empresa, com o nosso CNPJ.", {}),
            ("Cancelei o teste grátis dentro do prazo e mesmo assim fui cobrado. Quero o dinheiro de volta.", dict(refund=True)),
            ("Dá para mudar a forma de pagamento para boleto a partir do próximo mês?", {}),
            ("Pagamos a fatura há uma semana e no sistema ainda aparece como em aberto.", {}),
        ],
        "technical": [
            ("O aplicativo fecha sozinho toda vez que tento anexar uma foto.", {}),
            ("Depois da última atualização, os contatos pararam de sincronizar entre o celular e o computador.", {}),
            ("Quando exporto o relatório em PDF, as tabelas saem cortadas.", {}),
            ("A câmera aparece como offline no app, mas o Wi-Fi está funcionando normalmente.", {}),
            ("A API retorna erro 500 quando o nome do cliente tem acento.", {}),
            ("A busca não encontra nada quando digito palavras com cedilha.", {}),
        ],
        "sales": [
            ("Somos uma escola com 40 professores e temos interesse no plano para equipes. Podem mandar um orçamento?", {}),
            ("Vocês têm desconto para ONGs?", {}),
            ("Gostaríamos de ver uma demonstração antes de fechar a compra. Quando seria possível?", {}),
            ("Qual a diferença entre o plano Essencial e o Avançado? Precisamos de relatórios personalizados.", {}),
            ("Tenho duas padarias e estou pensando em comprar o sistema de caixa de vocês.", {}),
            ("Se contratarmos por dois anos, o valor mensal fica menor?", {}),
        ],
        "account": [
            ("Não consigo entrar na conta porque o código de verificação não chega.", {}),
            ("Quero trocar o e-mail cadastrado no meu perfil; não uso mais o antigo.", {}),
            ("Por favor, excluam minha conta e todos os meus dados.", {}),
            ("O antigo administrador saiu da empresa. Como passo o acesso de administrador para outra pessoa?", {}),
            ("Minha conta foi bloqueada depois de várias tentativas de senha.", {}),
            ("O link para redefinir a senha diz que expirou assim que eu clico.", {}),
        ],
        "shipping": [
            ("O rastreamento está parado em 'objeto postado' há seis dias. Meu pedido foi mesmo enviado?", {}),
            ("Consta como entregue, mas o pacote não chegou aqui nem na portaria.", {}),
            ("Posso mudar o endereço de entrega? O pedido ainda não saiu.", {}),
            ("A caixa chegou amassada e a luminária veio quebrada. Quero o reembolso desse item.", dict(refund=True)),
            ("Chegou só um dos três produtos que comprei.", {}),
            ("Vocês entregam em Fernando de Noronha? Qual é o prazo?", {}),
        ],
        "careers": [
            ("Queria saber se a vaga de analista de dados júnior ainda está aberta.", {}),
            ("Fiz a segunda entrevista na semana passada e ainda não tive retorno. Alguma novidade?", {}),
            ("Vocês oferecem estágio de férias para estudantes de engenharia?", {}),
            ("Enviei o currículo errado na candidatura. Posso mandar a versão atualizada?", {}),
            ("Quero retirar minha candidatura à vaga de assistente administrativo, pois aceitei outra proposta.", {}),
            ("A vaga de atendimento ao cliente é remota ou presencial?", {}),
        ],
    },
    greet=["Olá,", "Bom dia,", "Boa tarde,", "Oi, pessoal,", "Prezados,"],
    ref=["O número do meu pedido é {n}.", "Protocolo: {n}.", "Nota fiscal nº {n}.", "Meu código de cliente é {n}."],
    deadline=["Preciso disso resolvido até sexta-feira.", "Por favor, me respondam até o fim do mês.", "Temos auditoria no dia 15 e preciso da resposta antes.",
              "Tem que estar pronto antes do lançamento na segunda.", "Viajo no dia 4, então preciso saber antes disso."],
    tone={
        0: ["Desde já, obrigado!", "Obrigada pela ajuda.", "Abraços.", ""],
        1: ["É um pouco chato, para ser sincero.", "Agradeço se a resposta vier mais rápido que da última vez.", "Nada grave, mas incomoda um pouco."],
        2: ["Isso é muito frustrante e está me fazendo perder tempo.", "Já expliquei isso duas vezes e continua sem solução.", "Estou bem cansado de ter que cobrar isso."],
        3: ["Isso é um absurdo. Ou resolvem hoje ou cancelo tudo e vou reclamar em todo lugar.",
            "Estou revoltado. Terceira mensagem e nenhuma ajuda. Quero falar com um gerente agora.",
            "Atendimento vergonhoso. Se não resolverem hoje, vou contestar todas as cobranças no banco."],
    },
    signoff=["Att., Juliana", "Obrigado, Rafael", "Abraço, Beatriz"],
    senders=["Juliana", "Rafael Costa", "Beatriz M."],
    channels=["email", "chat", "formulário"],
)

SUPPORT["fr"] = dict(
    cores={
        "billing": [
            ("Vous m'avez prélevé deux fois l'abonnement de juin. Merci de me rembourser le second prélèvement.", dict(refund=True)),
            ("Je vois sur mon relevé un débit de 39 € que je ne reconnais pas. À quoi correspond-il ?", {}),
            ("Pourriez-vous établir les factures au nom de la société plutôt qu'à mon nom ?", {}),
            ("J'ai résilié l'essai gratuit dans les délais et j'ai quand même été débité. Je souhaite être remboursé.", dict(refund=True)),
            ("Est-il possible de passer au prélèvement SEPA à partir du mois prochain ?", {}),
            ("Nous avons réglé la facture par virement il y a huit jours et elle apparaît toujours comme impayée.", {}),
        ],
        "technical": [
            ("L'application se ferme dès que j'essaie de joindre une photo.", {}),
            ("Depuis la dernière mise à jour, mes contacts ne se synchronisent plus entre le téléphone et l'ordinateur.", {}),
            ("Quand j'exporte le rapport en PDF, les tableaux sont coupés en deux.", {}),
            ("Le thermostat s'affiche hors ligne dans l'appli alors que le wifi marche très bien.", {}),
            ("L'API renvoie une erreur 500 dès que le nom du client contient un accent.", {}),
            ("La carte ne s'affiche pas sur la version ordinateur, il n'y a qu'un carré gris.", {}),
        ],
        "sales": [
            ("Nous sommes une école de musique de 25 professeurs et le forfait équipe nous intéresse. Pouvez-vous nous faire un devis ?", {}),
            ("Proposez-vous une remise pour les associations ?", {}),
            ("Nous aimerions une démonstration avant de nous décider. Quelles sont vos disponibilités ?", {}),
            ("Quelle est la différence entre l'offre Essentiel et l'offre Pro ? Il nous faut des exports comptables.", {}),
            ("Je tiens deux boulangeries et j'envisage d'acheter votre logiciel de caisse.", {}),
            ("Si nous nous engageons sur deux ans, le tarif mensuel baisse-t-il ?", {}),
        ],
        "account": [
            ("Je n'arrive pas à me connecter car le code de vérification ne m'arrive jamais.", {}),
            ("Je voudrais changer l'adresse e-mail de mon profil, je n'ai plus accès à l'ancienne.", {}),
            ("Merci de supprimer mon compte ainsi que toutes mes données.", {}),
            ("Notre ancien administrateur a quitté l'entreprise. Comment transférer les droits d'administration ?", {}),
            ("Mon compte est bloqué après plusieurs mots de passe erronés.", {}),
            ("Le lien de réinitialisation du mot de passe indique qu'il a expiré alors que je viens de le recevoir.", {}),
        ],
        "shipping": [
            ("Le suivi indique « en préparation » depuis six jours. Mon colis est-il vraiment parti ?", {}),
            ("Le colis est noté comme livré, mais il n'est ni chez moi ni chez la gardienne.", {}),
            ("Puis-je modifier l'adresse de livraison ? La commande n'est pas encore expédiée.", {}),
            ("Le carton est arrivé écrasé et la théière était cassée. Je demande le remboursement de cet article.", dict(refund=True)),
            ("Je n'ai reçu qu'un seul des trois articles commandés.", {}),
            ("Livrez-vous en Corse, et en combien de temps ?", {}),
        ],
        "careers": [
            ("Le poste de technicien de maintenance est-il toujours à pourvoir ?", {}),
            ("J'ai passé le second entretien mardi dernier et je n'ai pas de nouvelles. Où en est le recrutement ?", {}),
            ("Proposez-vous des stages d'été pour les étudiants en école d'ingénieurs ?", {}),
            ("J'ai joint un ancien CV par erreur. Puis-je vous envoyer la version à jour ?", {}),
            ("Je retire ma candidature au poste d'assistant comptable, j'ai accepté une autre offre.", {}),
            ("Le poste de conseiller clientèle est-il ouvert au télétravail ?", {}),
        ],
    },
    greet=["Bonjour,", "Bonsoir,", "Madame, Monsieur,", "Bonjour à toute l'équipe,"],
    ref=["Mon numéro de commande est le {n}.", "Référence : {n}.", "Facture n° {n}.", "Mon numéro client : {n}."],
    deadline=["J'en ai besoin avant vendredi.", "Merci de me répondre avant la fin du mois.", "Nous avons un audit le 12, il me faut la réponse avant.",
              "Cela doit être réglé avant notre lancement de lundi.", "Je pars en voyage le 3, j'aimerais savoir avant."],
    tone={
        0: ["Merci d'avance !", "Merci pour votre aide.", "Bonne journée.", ""],
        1: ["C'est un peu agaçant, je l'avoue.", "J'apprécierais une réponse un peu plus rapide que la dernière fois.", "Rien de grave, mais c'est un peu pénible."],
        2: ["C'est vraiment frustrant et cela me fait perdre beaucoup de temps.", "J'ai déjà expliqué le problème deux fois et rien n'a bougé.", "J'en ai assez de devoir relancer."],
        3: ["C'est inadmissible. Réglez ça aujourd'hui ou je résilie et je le fais savoir partout.",
            "Je suis furieux. Troisième message, aucune aide. Passez-moi un responsable immédiatement.",
            "Service lamentable. Si ce n'est pas résolu aujourd'hui, je conteste tous les prélèvements auprès de ma banque."],
    },
    signoff=["Cordialement, Claire", "Merci, Julien", "Bien à vous, Nadia"],
    senders=["Claire", "Julien Moreau", "Nadia B."],
    channels=["email", "chat", "formulaire"],
)

SUPPORT["de"] = dict(
    cores={
        "billing": [
            ("Sie haben den Beitrag für Juli doppelt abgebucht. Bitte erstatten Sie die zweite Abbuchung.", dict(refund=True)),
            ("Auf meinem Kontoauszug steht eine Abbuchung über 49 Euro, die ich nicht zuordnen kann. Wofür ist die?", {}),
            ("Bitte stellen Sie die Rechnungen künftig auf unsere Firma aus und nicht auf meinen Namen.", {}),
            ("Ich habe die Testphase rechtzeitig gekündigt und trotzdem wurde ein voller Monat berechnet. Ich möchte das Geld zurück.", dict(refund=True)),
            ("Kann ich ab nächstem Monat per Lastschrift statt mit Kreditkarte zahlen?", {}),
            ("Wir haben die Rechnung vor einer Woche überwiesen, im Kundenportal steht sie aber noch als offen.", {}),
        ],
        "technical": [
            ("Sobald ich ein Foto anhänge, schließt sich die App ohne Meldung.", {}),
            ("Seit dem letzten Update werden meine Kontakte nicht mehr zwischen Handy und Laptop abgeglichen.", {}),
            ("Beim Export als PDF werden die Tabellen in der Mitte abgeschnitten.", {}),
            ("Das Thermostat wird in der App als offline angezeigt, obwohl das WLAN einwandfrei läuft.", {}),
            ("Die API liefert einen 500-Fehler, sobald im Kundennamen ein Umlaut vorkommt.", {}),
            ("In der Desktop-Version lädt die Karte nicht, man sieht nur ein graues Feld.", {}),
        ],
        "sales": [
            ("Wir sind eine Sprachschule mit 20 Lehrkräften und interessieren uns für den Team-Tarif. Können Sie uns ein Angebot schicken?", {}),
            ("Gibt es bei Ihnen Rabatte für gemeinnützige Vereine?", {}),
            ("Vor einer Kaufentscheidung hätten wir gern eine Vorführung. Wann hätten Sie Zeit?", {}),
            ("Was unterscheidet den Basis- vom Profi-Tarif? Wir brauchen eine DATEV-Schnittstelle.", {}),
            ("Ich betreibe zwei Cafés und überlege, Ihr Kassensystem zu kaufen.", {}),
            ("Wird der Monatspreis günstiger, wenn wir gleich für zwei Jahre abschließen?", {}),
        ],
        "account": [
            ("Ich komme nicht in mein Konto, weil der Bestätigungscode nie ankommt.", {}),
            ("Bitte ändern Sie die E-Mail-Adresse in meinem Profil, auf die alte habe ich keinen Zugriff mehr.", {}),
            ("Bitte löschen Sie mein Konto und alle dazugehörigen Daten.", {}),
            ("Unser bisheriger Administrator hat die Firma verlassen. Wie übertragen wir die Admin-Rechte?", {}),
            ("Mein Konto wurde nach mehreren falschen Passworteingaben gesperrt.", {}),
            ("Der Link zum Zurücksetzen des Passworts ist angeblich abgelaufen, obwohl ich ihn sofort angeklickt habe.", {}),
        ],
        "shipping": [
            ("Die Sendungsverfolgung zeigt seit sechs Tagen nur 'Auftrag erfasst'. Ist mein Paket überhaupt unterwegs?", {}),
            ("Das Paket gilt als zugestellt, ist aber weder bei mir noch bei den Nachbarn.", {}),
            ("Kann ich die Lieferadresse noch ändern? Die Bestellung ist noch nicht verschickt.", {}),
            ("Der Karton kam zerdrückt an und die Vase war zerbrochen. Ich möchte den Betrag dafür erstattet bekommen.", dict(refund=True)),
            ("Von meinen drei bestellten Artikeln ist nur einer angekommen.", {}),
            ("Liefern Sie auch nach Liechtenstein, und wie lange dauert das?", {}),
        ],
        "careers": [
            ("Ist die Stelle als Elektroniker in der Instandhaltung noch frei?", {}),
            ("Ich hatte letzte Woche das zweite Vorstellungsgespräch und noch nichts gehört. Gibt es Neuigkeiten?", {}),
            ("Bieten Sie Sommerpraktika für Studierende im Maschinenbau an?", {}),
            ("Ich habe versehentlich einen alten Lebenslauf hochgeladen. Darf ich die aktuelle Fassung nachreichen?", {}),
            ("Ich ziehe meine Bewerbung als Sachbearbeiterin zurück, da ich ein anderes Angebot angenommen habe.", {}),
            ("Ist bei der Stelle im Kundenservice Homeoffice möglich?", {}),
        ],
    },
    greet=["Hallo,", "Guten Tag,", "Sehr geehrte Damen und Herren,", "Moin,", "Liebes Support-Team,"],
    ref=["Meine Bestellnummer lautet {n}.", "Vorgangsnummer: {n}.", "Rechnungsnummer {n}.", "Meine Kundennummer ist {n}."],
    deadline=["Ich brauche das bis Freitag erledigt.", "Bitte antworten Sie mir bis Monatsende.", "Am 12. haben wir eine Prüfung, bis dahin brauche ich eine Antwort.",
              "Das muss vor unserem Start am Montag behoben sein.", "Ich verreise am 3., bis dahin muss ich es wissen."],
    tone={
        0: ["Vielen Dank im Voraus!", "Danke für Ihre Hilfe.", "Schönen Tag noch.", ""],
        1: ["Das ist ehrlich gesagt etwas lästig.", "Eine etwas schnellere Antwort als beim letzten Mal wäre schön.", "Nicht dramatisch, aber ein bisschen ärgerlich."],
        2: ["Das ist wirklich frustrierend und kostet mich viel Zeit.", "Ich habe das schon zweimal geschildert und es ist immer noch nicht gelöst.", "Ich habe keine Lust mehr, ständig hinterherzulaufen."],
        3: ["Das ist völlig inakzeptabel. Entweder Sie lösen das heute oder ich kündige und schreibe überall eine Bewertung.",
            "Ich bin stinksauer. Dritte Nachricht, null Hilfe. Ich will sofort einen Vorgesetzten sprechen.",
            "Unterirdischer Service. Wenn das heute nicht gelöst ist, lasse ich alle Abbuchungen zurückbuchen."],
    },
    signoff=["Viele Grüße, Jana", "Danke, Stefan", "Beste Grüße, Elif"],
    senders=["Jana", "Stefan Krüger", "Elif A."],
    channels=["E-Mail", "Chat", "Kontaktformular"],
)
SUPPORT_Q["es"] = dict(
    dept_phr=["¿Qué equipo debería encargarse de este ticket?", "¿A qué bandeja interna enviarías este correo?", "¿Quién tiene que responder a esta consulta?"],
    dept_pool={
        "billing": ["Cobros, facturas, reembolsos y formas de pago"], "technical": ["Fallos, errores y cosas que no funcionan"],
        "sales": ["Posibles clientes que preguntan por precios, planes o demostraciones"], "account": ["Acceso a la cuenta, contraseñas, perfil y permisos"],
        "shipping": ["Envíos, paquetes, seguimiento y direcciones de entrega"], "careers": ["Ofertas de empleo, candidaturas y entrevistas"],
        "legal": ["Contratos, condiciones y reclamaciones formales"], "press": ["Periodistas y medios de comunicación"],
    },
    frus_phr=["¿Qué tan molesto suena el cliente?", "Valora el enfado de quien escribe.", "¿En qué estado de ánimo está el remitente?"],
    frus_scales=[(["Tranquilo y cordial", "Algo molesto", "Claramente frustrado", "Furioso, amenaza con irse o escalar"], None),
                 (["Sereno", "Descontento pero comedido", "Indignado o amenazante"], {0: 0, 1: 1, 2: 1, 3: 2})],
    deadline_phr=["¿Indica el remitente una fecha o un día límite?", "¿Se menciona algún plazo en el mensaje?"],
    deadline_mean=[("Se indica un día, fecha o evento antes del cual necesita respuesta", "No se menciona ningún plazo")],
    ref_phr=["¿Incluye el mensaje un número de pedido, factura o cliente?", "¿Aporta el cliente alguna referencia que podamos buscar?"],
    ref_mean=[("Aparece algún número de referencia", "No aparece ningún número de referencia")],
    refund_phr=["¿Pide el cliente que le devuelvan dinero?", "¿Se solicita un reembolso?"],
    refund_mean=[("Pide recuperar todo o parte del dinero", "No pide que le devuelvan dinero")],
    dept_noul={
        "billing": (["¿Trata sobre un cobro o una factura?"], [("El mensaje trata de pagos, cobros o facturas", "Trata de otra cosa")]),
        "technical": (["¿Describe el cliente algo que no funciona?"], [("Se describe un fallo del producto", "No se describe ningún fallo")]),
        "sales": (["¿Es una posible compra nueva?"], [("Quien escribe quiere comprar o conocer precios", "No pretende comprar nada")]),
        "account": (["¿Tiene que ver con el acceso o la configuración de la cuenta?"], None),
        "shipping": (["¿Es sobre una entrega?"], [("Trata de un envío o un paquete", "No trata de ninguna entrega")]),
        "careers": (["¿Es la persona un candidato a un empleo?"], None),
    },
)

SUPPORT_Q["pt"] = dict(
    dept_phr=["Qual equipe deve assumir este chamado?", "Para qual fila interna este e-mail deve ir?", "Quem deve responder a esta mensagem?"],
    dept_pool={
        "billing": ["Cobranças, faturas, reembolsos e formas de pagamento"], "technical": ["Falhas, erros e coisas que não funcionam"],
        "sales": ["Possíveis clientes perguntando sobre preços, planos ou demonstrações"], "account": ["Acesso à conta, senhas, perfil e permissões"],
        "shipping": ["Entregas, pacotes, rastreamento e endereços"], "careers": ["Vagas, candidaturas e entrevistas"],
        "legal": ["Contratos, termos e reclamações formais"], "press": ["Jornalistas e imprensa"],
    },
    frus_phr=["Quão irritado parece o cliente?", "Avalie o nível de irritação de quem escreve.", "Qual é o humor do remetente?"],
    frus_scales=[(["Calmo e cordial", "Um pouco incomodado", "Claramente frustrado", "Furioso, ameaça sair ou escalar"], None),
                 (["Tranquilo", "Insatisfeito, mas contido", "Revoltado ou fazendo ameaças"], {0: 0, 1: 1, 2: 1, 3: 2})],
    deadline_phr=["O remetente informa uma data ou um dia limite?", "Há algum prazo mencionado na mensagem?"],
    deadline_mean=[("É dito um dia, data ou evento até o qual precisa de resposta", "Nenhum prazo é mencionado")],
    ref_phr=["A mensagem traz número de pedido, nota ou cliente?", "O cliente informa alguma referência que possamos consultar?"],
    ref_mean=[("Há algum número de referência", "Não há número de referência")],
    refund_phr=["O cliente pede dinheiro de volta?", "Está sendo solicitado um reembolso?"],
    refund_mean=[("Pede a devolução de todo ou parte do valor", "Não pede devolução de dinheiro")],
    dept_noul={
        "billing": (["É sobre uma cobrança ou fatura?"], [("A mensagem trata de pagamentos, cobranças ou faturas", "Trata de outro assunto")]),
        "technical": (["O cliente descreve algo que não funciona?"], [("Um defeito ou erro é descrito", "Nenhum defeito é descrito")]),
        "sales": (["É uma possível nova venda?"], [("Quem escreve quer comprar ou saber preços", "Não quer comprar nada")]),
        "account": (["Tem a ver com acesso ou configurações da conta?"], None),
        "shipping": (["É sobre uma entrega?"], [("Trata de envio ou pacote", "Não trata de entrega")]),
        "careers": (["A pessoa é candidata a uma vaga?"], None),
    },
)

SUPPORT_Q["fr"] = dict(
    dept_phr=["Quelle équipe doit prendre ce ticket ?", "Dans quelle file interne faut-il classer ce message ?", "Qui doit répondre à cette demande ?"],
    dept_pool={
        "billing": ["Prélèvements, factures, remboursements et moyens de paiement"], "technical": ["Pannes, erreurs et fonctions qui ne marchent pas"],
        "sales": ["Prospects qui demandent des tarifs, des offres ou une démo"], "account": ["Connexion, mot de passe, profil et droits d'accès"],
        "shipping": ["Expéditions, colis, suivi et adresses de livraison"], "careers": ["Offres d'emploi, candidatures et entretiens"],
        "legal": ["Contrats, conditions générales et litiges"], "press": ["Journalistes et demandes des médias"],
    },
    frus_phr=["À quel point le client semble-t-il agacé ?", "Évaluez l'irritation de l'expéditeur.", "Dans quel état d'esprit est la personne qui écrit ?"],
    frus_scales=[(["Calme et aimable", "Un peu agacé", "Nettement frustré", "Furieux, menace de partir ou d'escalader"], None),
                 (["Serein", "Mécontent mais mesuré", "Hors de lui ou menaçant"], {0: 0, 1: 1, 2: 1, 3: 2})],
    deadline_phr=["L'expéditeur donne-t-il une date ou un jour limite ?", "Un délai est-il mentionné dans le message ?"],
    deadline_mean=[("Un jour, une date ou un événement avant lequel il faut répondre est indiqué", "Aucun délai n'est indiqué")],
    ref_phr=["Y a-t-il dans le message une référence de commande, de facture ou de client ?", "Le client donne-t-il une référence à rechercher ?"],
    ref_mean=[("Un numéro de référence figure dans le message", "Aucun numéro de référence")],
    refund_phr=["Le client demande-t-il à être remboursé ?", "S'agit-il d'une demande de remboursement ?"],
    refund_mean=[("Il réclame tout ou partie de son argent", "Il ne réclame pas d'argent")],
    dept_noul={
        "billing": (["Est-ce une question de prélèvement ou de facture ?"], [("Le message porte sur des paiements ou des factures", "Il porte sur autre chose")]),
        "technical": (["Le client décrit-il quelque chose qui ne fonctionne pas ?"], [("Une panne ou une erreur est décrite", "Aucune panne n'est décrite")]),
        "sales": (["S'agit-il d'un achat potentiel ?"], [("L'auteur veut acheter ou connaître les prix", "L'auteur ne veut rien acheter")]),
        "account": (["Cela concerne-t-il l'accès au compte ou ses réglages ?"], None),
        "shipping": (["Est-ce à propos d'une livraison ?"], [("Il s'agit d'un envoi ou d'un colis", "Aucune livraison n'est en cause")]),
        "careers": (["La personne est-elle candidate à un poste ?"], None),
    },
)

SUPPORT_Q["de"] = dict(
    dept_phr=["Welches Team soll dieses Ticket übernehmen?", "In welche interne Warteschlange gehört diese Mail?", "Wer im Unternehmen sollte hierauf antworten?"],
    dept_pool={
        "billing": ["Abbuchungen, Rechnungen, Erstattungen und Zahlungsarten"], "technical": ["Fehler, Abstürze und Dinge, die nicht funktionieren"],
        "sales": ["Interessenten mit Fragen zu Preisen, Tarifen oder einer Vorführung"], "account": ["Anmeldung, Passwort, Profil und Berechtigungen"],
        "shipping": ["Versand, Pakete, Sendungsverfolgung und Lieferadressen"], "careers": ["Stellenangebote, Bewerbungen und Vorstellungsgespräche"],
        "legal": ["Verträge, AGB und rechtliche Streitfälle"], "press": ["Journalisten und Medienanfragen"],
    },
    frus_phr=["Wie verärgert klingt der Kunde?", "Schätzen Sie die Gereiztheit des Absenders ein.", "In welcher Stimmung schreibt diese Person?"],
    frus_scales=[(["Ruhig und freundlich", "Etwas genervt", "Deutlich verärgert", "Wütend, droht mit Kündigung oder Eskalation"], None),
                 (["Gelassen", "Unzufrieden, aber sachlich", "Außer sich oder drohend"], {0: 0, 1: 1, 2: 1, 3: 2})],
    deadline_phr=["Nennt der Absender einen Termin oder Tag, bis wann er etwas braucht?", "Wird in der Nachricht eine Frist genannt?"],
    deadline_mean=[("Ein Tag, Datum oder Ereignis, bis zu dem eine Antwort nötig ist, wird genannt", "Es wird keine Frist genannt")],
    ref_phr=["Enthält die Nachricht eine Bestell-, Rechnungs- oder Kundennummer?", "Gibt der Kunde eine Nummer an, die wir nachschlagen können?"],
    ref_mean=[("Eine Referenznummer ist angegeben", "Keine Referenznummer angegeben")],
    refund_phr=["Will der Kunde Geld zurück?", "Wird hier eine Erstattung verlangt?"],
    refund_mean=[("Es wird ganz oder teilweise Geld zurückgefordert", "Es wird kein Geld zurückgefordert")],
    dept_noul={
        "billing": (["Geht es um eine Abbuchung oder Rechnung?"], [("Die Nachricht betrifft Zahlungen oder Rechnungen", "Es geht um etwas anderes")]),
        "technical": (["Beschreibt der Kunde etwas, das nicht funktioniert?"], [("Ein Fehler am Produkt wird beschrieben", "Kein Fehler wird beschrieben")]),
        "sales": (["Handelt es sich um einen möglichen Neukauf?"], [("Die Person möchte kaufen oder Preise erfahren", "Die Person will nichts kaufen")]),
        "account": (["Betrifft es den Kontozugang oder Kontoeinstellungen?"], None),
        "shipping": (["Geht es um eine Lieferung?"], [("Es geht um Versand oder ein Paket", "Keine Lieferung betroffen")]),
        "careers": (["Ist die Person eine Bewerberin oder ein Bewerber?"], None),
    },
)

for _lg, _n in (("en", 820), ("es", 85), ("pt", 85), ("fr", 85), ("de", 85)):
    register("support_routing", _lg, _n, support_builder(SUPPORT[_lg]), support_questions(SUPPORT_Q[_lg]))
# ======================================================================================
# REVIEWS  (stars 0..4 = 1..5 stars)
# ======================================================================================
REVIEWS = {}
REVIEWS["en"] = dict(
    products={
        "earbuds": dict(
            pros=["The sound is rich and the bass has real punch.", "They pair with my phone instantly every time.", "Noise cancelling blocks out the whole train carriage.", "The charging case is tiny and fits in any pocket."],
            cons=[("The left bud died completely after five weeks.", "durability"), ("They hurt my ears after about twenty minutes.", "comfort"), ("At this price I expected far better than this.", "price"), ("One full charge barely gets me through a single podcast.", "battery")],
            minor=[("The case scratches a bit easily.", "durability"), ("The touch controls take a day to get used to.", "ease_of_use")]),
        "espresso machine": dict(
            pros=["It pulls a proper crema in under a minute.", "Heats up faster than my kettle.", "The milk wand makes silky foam for flat whites.", "Looks great on the counter and is easy to wipe down."],
            cons=[("The pump started leaking water after a month.", "durability"), ("It is so loud my partner wakes up every morning.", "noise"), ("Seller took three weeks to deliver and the box was battered.", "delivery"), ("Customer service never answered my three emails about the broken steam valve.", "customer_service")],
            minor=[("The drip tray is a little small.", "size_fit"), ("It's a touch noisy while grinding.", "noise")]),
        "hotel": dict(
            pros=["The room was spotless and the bed was wonderfully comfortable.", "Staff at reception went out of their way to help us.", "Breakfast had a huge choice, including fresh pastries.", "Location is perfect, two minutes from the old town."],
            cons=[("Our bathroom had mould in the shower and hair in the sink.", "cleanliness"), ("The front desk was rude when we asked for extra towels.", "staff"), ("Street noise kept us awake until three in the morning.", "noise"), ("Way overpriced for what you get.", "price")],
            minor=[("The Wi-Fi was a bit slow in the evenings.", "performance"), ("Parking costs extra.", "price")]),
        "pizza place": dict(
            pros=["The crust is thin, blistered and properly chewy.", "Toppings taste fresh and generous.", "Our waiter was friendly and quick.", "Great spot for a relaxed dinner with friends."],
            cons=[("The pizza came out soggy and almost cold.", "taste"), ("We waited over an hour for two pizzas.", "staff"), ("Eighteen euros for a margherita is simply too much.", "price"), ("The tables and cutlery were sticky.", "cleanliness")],
            minor=[("It gets loud when it's full.", "noise"), ("Dessert menu is a bit limited.", "taste")]),
        "running shoes": dict(
            pros=["They feel light and springy even after ten kilometres.", "Grip on wet pavement is excellent.", "The upper breathes well on hot days.", "No break-in period at all, comfortable from day one."],
            cons=[("The sole started peeling off after 150 km.", "durability"), ("They run a full size small, so my toes hit the front.", "size_fit"), ("Gave me blisters on both heels every run.", "comfort"), ("The parcel arrived two weeks after the promised date.", "delivery")],
            minor=[("The laces are a little short.", "size_fit"), ("The white colour gets dirty quickly.", "durability")]),
        "robot vacuum": dict(
            pros=["It picks up all the dog hair from the rug.", "The app lets me set no-go zones in seconds.", "It finds its way back to the dock every time.", "Quiet enough to run while I'm on calls."],
            cons=[("It gets stuck under the sofa nearly every day.", "performance"), ("The battery now lasts fifteen minutes instead of an hour.", "battery"), ("The app is confusing and keeps logging me out.", "ease_of_use"), ("Support told me to wait six weeks for a replacement brush.", "customer_service")],
            minor=[("The dust bin is on the small side.", "size_fit"), ("Mapping the flat took two attempts.", "performance")]),
        "language app": dict(
            pros=["Lessons are short enough to do on my commute.", "The speaking exercises actually improved my pronunciation.", "The streak reminders keep me motivated.", "Grammar explanations are clear and to the point."],
            cons=[("The yearly subscription costs more than an evening class.", "price"), ("It crashes every time I open the listening section.", "performance"), ("Menus are so cluttered I can never find my saved words.", "ease_of_use"), ("They charged me after I cancelled and ignored my messages.", "customer_service")],
            minor=[("A few translations sound stiff.", "performance"), ("Too many notifications by default.", "ease_of_use")]),
        "office chair": dict(
            pros=["My back pain is gone after a full workday.", "Every part adjusts, even the armrest angle.", "Assembly took fifteen minutes with clear instructions.", "The mesh keeps me cool in summer."],
            cons=[("The gas lift sinks slowly during the day.", "durability"), ("The seat is too hard to sit on for more than an hour.", "comfort"), ("The courier left it in the rain and the box was soaked.", "delivery"), ("It creaks loudly every time I lean back.", "noise")],
            minor=[("The wheels are a bit loud on wooden floors.", "noise"), ("Armrests wobble slightly.", "durability")]),
    },
    verdict={
        4: ["Couldn't be happier with it.", "Five stars, no complaints at all.", "Honestly perfect.", "One of the best purchases I've made.", "Absolutely love it."],
        3: ["Very good overall, just that one small thing.", "Really happy apart from that minor niggle.", "Great value, small flaw aside.", "Would buy again despite that."],
        2: ["So it's a real mixed bag.", "Half great, half annoying.", "Some things are good, some are not. Average.", "Not bad, not great."],
        1: ["Disappointing overall, though not a total loss.", "More bad than good, sadly.", "I expected a lot more.", "Mostly a letdown."],
        0: ["Complete waste of money.", "Avoid at all costs.", "Terrible from start to finish.", "The worst purchase I've made in years."],
    },
    rec_yes=["I'd recommend it to anyone.", "I've already told my friends to get one.", "Definitely recommended."],
    rec_no=["I would not recommend this to anyone.", "Don't buy it.", "I'd tell friends to stay away."],
    neutral=[
        "The kettle holds 1.7 litres and comes in white or black. It has a removable limescale filter.",
        "Bought this chair in March for my home office. It arrived in two boxes and took about twenty minutes to assemble.",
        "The tent sleeps four, weighs 5.2 kg and packs into a bag of about 60 cm.",
        "This is the 2023 version of the earbuds. It includes three sizes of ear tips and a USB-C cable.",
        "We stayed two nights in a double room on the third floor. Check-in was at 3 pm and checkout at 11.",
        "The course has twelve modules and each one ends with a short quiz.",
        "The shoes are the trail version, with a deeper tread than the road model.",
        "The vacuum comes with a spare side brush and a charging dock.",
        "Ordered the medium size in grey. The package contained the chair, the base and a small bag of screws.",
        "The restaurant opens at 6 pm and takes reservations by phone only.",
        "The app offers French, Italian and Japanese courses, and lessons can be downloaded for offline use.",
        "The machine uses standard 58 mm portafilters and has a 2-litre water tank.",
    ],
)
REVIEWS["es"] = dict(
    products={
        "auriculares": dict(
            pros=["Suenan de maravilla y los graves tienen fuerza.", "Se conectan al móvil al instante.", "La cancelación de ruido aísla por completo en el metro."],
            cons=[("El auricular derecho dejó de funcionar al mes.", "durability"), ("Me duelen las orejas a los veinte minutos.", "comfort"), ("Por lo que cuestan, esperaba muchísimo más.", "price"), ("La batería no aguanta ni una hora.", "battery")],
            minor=[("El estuche se raya con facilidad.", "durability"), ("Los controles táctiles cuestan un poco al principio.", "ease_of_use")]),
        "hotel": dict(
            pros=["La habitación estaba impecable y la cama era comodísima.", "El personal de recepción fue amabilísimo.", "El desayuno era variado y todo fresco."],
            cons=[("El baño estaba sucio y olía a humedad.", "cleanliness"), ("En recepción nos atendieron de malas maneras.", "staff"), ("El ruido de la calle no nos dejó dormir.", "noise"), ("Carísimo para lo que ofrece.", "price")],
            minor=[("El wifi iba algo lento por la noche.", "performance"), ("El aparcamiento se paga aparte.", "price")]),
        "zapatillas": dict(
            pros=["Son ligeras y amortiguan muy bien.", "Agarran perfectamente en el asfalto mojado.", "Cómodas desde el primer día, sin rozaduras."],
            cons=[("La suela se despegó a los dos meses.", "durability"), ("Tallan muy pequeño y me aprietan los dedos.", "size_fit"), ("El pedido llegó con dos semanas de retraso.", "delivery")],
            minor=[("Los cordones son algo cortos.", "size_fit"), ("El blanco se ensucia enseguida.", "durability")]),
        "aspiradora robot": dict(
            pros=["Recoge todo el pelo del perro de la alfombra.", "La app permite marcar zonas prohibidas en segundos.", "Vuelve sola a la base sin fallar."],
            cons=[("Se queda atascada debajo del sofá casi a diario.", "performance"), ("La batería ya solo dura un cuarto de hora.", "battery"), ("El servicio técnico tardó seis semanas en contestar.", "customer_service")],
            minor=[("El depósito es algo pequeño.", "size_fit")]),
    },
    verdict={4: ["No podría estar más contento.", "Cinco estrellas sin dudarlo.", "Sencillamente perfecto."],
             3: ["Muy bien en general, salvo ese pequeño detalle.", "Contento, aunque con un pequeño pero.", "Lo volvería a comprar a pesar de eso."],
             2: ["Así que tiene cosas buenas y cosas malas a partes iguales.", "Ni fu ni fa.", "Cumple a medias."],
             1: ["En general, decepcionante, aunque no del todo.", "Más malo que bueno, por desgracia.", "Esperaba bastante más."],
             0: ["Dinero tirado a la basura.", "Un desastre de principio a fin.", "La peor compra que he hecho en años."]},
    rec_yes=["Lo recomiendo sin dudar.", "Ya se lo he recomendado a mis amigos."],
    rec_no=["No lo recomendaría a nadie.", "No lo compréis."],
    neutral=["La tetera tiene capacidad para 1,5 litros y viene en blanco o negro.", "Pasamos dos noches en una habitación doble del tercer piso; la entrada era a las 15:00.",
             "Es el modelo de 2023 e incluye tres tamaños de almohadillas y un cable USB-C.", "Pedí la talla 42 en color gris y llegó en una caja con las instrucciones en varios idiomas."],
)
REVIEWS["pt"] = dict(
    products={
        "fone de ouvido": dict(
            pros=["O som é encorpado e o grave é forte.", "Conecta no celular na hora.", "O cancelamento de ruído isola tudo no ônibus."],
            cons=[("O lado esquerdo parou de funcionar depois de um mês.", "durability"), ("Machuca a orelha depois de vinte minutos.", "comfort"), ("Pelo preço que paguei, esperava muito mais.", "price"), ("A bateria não dura nem uma hora.", "battery")],
            minor=[("O estojo risca fácil.", "durability"), ("Os comandos de toque levam um tempo para acostumar.", "ease_of_use")]),
        "pousada": dict(
            pros=["O quarto estava impecável e a cama era muito confortável.", "A equipe da recepção foi super atenciosa.", "O café da manhã era farto e caprichado."],
            cons=[("O banheiro estava sujo e com cheiro de mofo.", "cleanliness"), ("Fomos mal atendidos na recepção.", "staff"), ("O barulho da rua não deixou ninguém dormir.", "noise"), ("Caríssimo para o que oferece.", "price")],
            minor=[("O Wi-Fi ficava lento à noite.", "performance"), ("O estacionamento é cobrado à parte.", "price")]),
        "tênis de corrida": dict(
            pros=["É leve e amortece muito bem.", "Tem ótima aderência no asfalto molhado.", "Confortável desde o primeiro treino."],
            cons=[("A sola descolou em dois meses.", "durability"), ("A forma é pequena e aperta os dedos.", "size_fit"), ("A entrega atrasou duas semanas.", "delivery")],
            minor=[("O cadarço é meio curto.", "size_fit"), ("O branco suja muito rápido.", "durability")]),
        "aspirador robô": dict(
            pros=["Tira todo o pelo do cachorro do tapete.", "O app deixa marcar áreas proibidas em segundos.", "Volta sozinho para a base sem errar."],
            cons=[("Fica preso embaixo do sofá quase todo dia.", "performance"), ("A bateria agora dura só quinze minutos.", "battery"), ("A assistência técnica demorou seis semanas para responder.", "customer_service")],
            minor=[("O reservatório é um pouco pequeno.", "size_fit")]),
    },
    verdict={4: ["Não poderia estar mais satisfeito.", "Cinco estrelas, sem dúvida.", "Simplesmente perfeito."],
             3: ["Muito bom no geral, tirando esse detalhe.", "Satisfeito, apesar desse pequeno porém.", "Compraria de novo mesmo assim."],
             2: ["Ou seja, tem coisas boas e ruins na mesma medida.", "Nem bom nem ruim.", "Cumpre pela metade."],
             1: ["No geral, decepcionante, mas não um desastre total.", "Mais defeitos do que qualidades, infelizmente.", "Esperava bem mais."],
             0: ["Dinheiro jogado fora.", "Um desastre do começo ao fim.", "A pior compra que fiz em anos."]},
    rec_yes=["Recomendo sem pensar duas vezes.", "Já indiquei para os meus amigos."],
    rec_no=["Não recomendo para ninguém.", "Não comprem."],
    neutral=["A chaleira tem capacidade de 1,7 litro e vem nas cores branca e preta.", "Ficamos duas noites num quarto de casal no segundo andar; o check-in era às 14h.",
             "É a versão 2023 e vem com três tamanhos de borrachinha e cabo USB-C.", "Pedi o tamanho 40 na cor cinza e veio numa caixa com manual em português."],
)
REVIEWS["fr"] = dict(
    products={
        "écouteurs": dict(
            pros=["Le son est riche et les basses ont du punch.", "Ils se connectent au téléphone instantanément.", "La réduction de bruit coupe tout dans le métro."],
            cons=[("L'écouteur gauche a lâché au bout d'un mois.", "durability"), ("J'ai mal aux oreilles après vingt minutes.", "comfort"), ("À ce prix-là, j'attendais beaucoup mieux.", "price"), ("La batterie ne tient même pas une heure.", "battery")],
            minor=[("Le boîtier se raye facilement.", "durability"), ("Les commandes tactiles demandent un temps d'adaptation.", "ease_of_use")]),
        "hôtel": dict(
            pros=["La chambre était impeccable et la literie excellente.", "Le personnel de l'accueil a été aux petits soins.", "Le petit-déjeuner était copieux et varié."],
            cons=[("La salle de bains était sale et sentait l'humidité.", "cleanliness"), ("L'accueil a été désagréable du début à la fin.", "staff"), ("Le bruit de la rue nous a empêchés de dormir.", "noise"), ("Bien trop cher pour ce que c'est.", "price")],
            minor=[("Le wifi était un peu lent le soir.", "performance"), ("Le parking est payant.", "price")]),
        "chaussures de course": dict(
            pros=["Elles sont légères et très bien amorties.", "L'accroche sur route mouillée est excellente.", "Confortables dès la première sortie."],
            cons=[("La semelle s'est décollée après deux mois.", "durability"), ("Elles taillent petit et compriment les orteils.", "size_fit"), ("Le colis est arrivé avec deux semaines de retard.", "delivery")],
            minor=[("Les lacets sont un peu courts.", "size_fit"), ("Le blanc se salit vite.", "durability")]),
        "aspirateur robot": dict(
            pros=["Il ramasse tous les poils du chien sur le tapis.", "L'appli permet de définir des zones interdites en quelques secondes.", "Il retrouve toujours sa base."],
            cons=[("Il reste coincé sous le canapé presque tous les jours.", "performance"), ("La batterie ne dure plus qu'un quart d'heure.", "battery"), ("Le SAV a mis six semaines à répondre.", "customer_service")],
            minor=[("Le bac à poussière est un peu petit.", "size_fit")]),
    },
    verdict={4: ["Je ne pourrais pas être plus satisfait.", "Cinq étoiles sans hésiter.", "Tout simplement parfait."],
             3: ["Très bien dans l'ensemble, à ce petit détail près.", "Content, malgré ce petit bémol.", "Je le rachèterais quand même."],
             2: ["Bref, du bon et du moins bon à parts égales.", "Ni bien ni mal.", "Ça fait le travail à moitié."],
             1: ["Globalement décevant, même si tout n'est pas à jeter.", "Plus de défauts que de qualités, hélas.", "Je m'attendais à bien mieux."],
             0: ["De l'argent jeté par les fenêtres.", "Une catastrophe du début à la fin.", "Le pire achat que j'ai fait depuis des années."]},
    rec_yes=["Je le recommande sans hésiter.", "Je l'ai déjà conseillé à mes amis."],
    rec_no=["Je ne le recommanderais à personne.", "Passez votre chemin."],
    neutral=["La bouilloire contient 1,7 litre et existe en blanc ou en noir.", "Nous avons passé deux nuits dans une chambre double au deuxième étage ; l'arrivée se faisait à 15 h.",
             "C'est la version 2023, livrée avec trois tailles d'embouts et un câble USB-C.", "J'ai commandé la pointure 41 en gris ; la notice est en plusieurs langues."],
)
REVIEWS["de"] = dict(
    products={
        "Kopfhörer": dict(
            pros=["Der Klang ist voll und der Bass hat ordentlich Druck.", "Sie verbinden sich sofort mit dem Handy.", "Die Geräuschunterdrückung schluckt den ganzen Zuglärm."],
            cons=[("Der linke Hörer ist nach einem Monat ausgefallen.", "durability"), ("Nach zwanzig Minuten tun mir die Ohren weh.", "comfort"), ("Für den Preis hätte ich deutlich mehr erwartet.", "price"), ("Der Akku hält nicht einmal eine Stunde.", "battery")],
            minor=[("Das Ladecase verkratzt leicht.", "durability"), ("An die Touch-Steuerung muss man sich erst gewöhnen.", "ease_of_use")]),
        "Hotel": dict(
            pros=["Das Zimmer war blitzsauber und das Bett sehr bequem.", "Das Personal an der Rezeption war unglaublich hilfsbereit.", "Das Frühstück war reichhaltig und frisch."],
            cons=[("Das Bad war schmutzig und roch muffig.", "cleanliness"), ("An der Rezeption wurden wir unfreundlich abgefertigt.", "staff"), ("Wegen des Straßenlärms konnten wir kaum schlafen.", "noise"), ("Viel zu teuer für das Gebotene.", "price")],
            minor=[("Das WLAN war abends etwas langsam.", "performance"), ("Der Parkplatz kostet extra.", "price")]),
        "Laufschuhe": dict(
            pros=["Sie sind leicht und sehr gut gedämpft.", "Auf nassem Asphalt haben sie super Grip.", "Vom ersten Lauf an bequem."],
            cons=[("Die Sohle hat sich nach zwei Monaten gelöst.", "durability"), ("Sie fallen eine Nummer zu klein aus und drücken vorne.", "size_fit"), ("Das Paket kam zwei Wochen zu spät.", "delivery")],
            minor=[("Die Schnürsenkel sind etwas kurz.", "size_fit"), ("Das Weiß wird schnell schmutzig.", "durability")]),
        "Saugroboter": dict(
            pros=["Er holt alle Hundehaare aus dem Teppich.", "In der App legt man Sperrzonen in Sekunden fest.", "Er findet immer zuverlässig zur Ladestation zurück."],
            cons=[("Er bleibt fast täglich unter dem Sofa hängen.", "performance"), ("Der Akku hält inzwischen nur noch eine Viertelstunde.", "battery"), ("Der Kundendienst hat sechs Wochen für eine Antwort gebraucht.", "customer_service")],
            minor=[("Der Staubbehälter ist etwas klein.", "size_fit")]),
    },
    verdict={4: ["Ich könnte nicht zufriedener sein.", "Fünf Sterne, ohne Wenn und Aber.", "Einfach perfekt."],
             3: ["Insgesamt sehr gut, bis auf diese Kleinigkeit.", "Zufrieden, trotz dieses kleinen Mankos.", "Würde ich trotzdem wieder kaufen."],
             2: ["Also Licht und Schatten zu gleichen Teilen.", "Weder gut noch schlecht.", "Erfüllt seinen Zweck nur halb."],
             1: ["Insgesamt enttäuschend, wenn auch kein Totalausfall.", "Leider mehr Schlechtes als Gutes.", "Ich hatte deutlich mehr erwartet."],
             0: ["Rausgeworfenes Geld.", "Von vorne bis hinten eine Katastrophe.", "Der schlechteste Kauf seit Jahren."]},
    rec_yes=["Klare Empfehlung.", "Habe ich schon im Freundeskreis weiterempfohlen."],
    rec_no=["Würde ich niemandem empfehlen.", "Finger weg."],
    neutral=["Der Wasserkocher fasst 1,7 Liter und ist in Weiß oder Schwarz erhältlich.", "Wir waren zwei Nächte im Doppelzimmer im zweiten Stock; Check-in ab 15 Uhr.",
             "Das ist die Version von 2023, mit drei Aufsatzgrößen und einem USB-C-Kabel.", "Bestellt habe ich Größe 43 in Grau; die Anleitung liegt mehrsprachig bei."],
)


def review_builder(C):
    prods = sorted(C["products"])

    def build(rng):
        if rng.random() < 0.08:
            return pick(rng, C["neutral"]), dict(sentiment="neutral")
        P = C["products"][pick(rng, prods)]
        stars = rng.randrange(5)
        pros = rng.sample(P["pros"], min(2, len(P["pros"])))
        cons = rng.sample(P["cons"], 2)
        aspect = None
        rec = None
        if stars == 4:
            parts = pros[: rng.choice([1, 2])] + [pick(rng, C["verdict"][4])]
        elif stars == 3:
            m = pick(rng, P["minor"])
            aspect = m[1]
            parts = pros[: rng.choice([1, 2])] + [m[0], pick(rng, C["verdict"][3])]
        elif stars == 2:
            aspect = cons[0][1]
            pc = [pros[0], cons[0][0]]
            if rng.random() < 0.5:
                pc.reverse()
            parts = pc + [pick(rng, C["verdict"][2])]
        elif stars == 1:
            aspect = cons[0][1]
            parts = [cons[0][0]]
            if rng.random() < 0.5:
                parts = [pros[0], cons[0][0]] if rng.random() < 0.5 else [cons[0][0], pros[0]]
            parts.append(pick(rng, C["verdict"][1]))
        else:
            if cons[0][1] == cons[1][1]:
                aspect = cons[0][1]
            parts = [cons[0][0], cons[1][0], pick(rng, C["verdict"][0])]
        if stars >= 3 and rng.random() < 0.4:
            parts.append(pick(rng, C["rec_yes"]))
            rec = True
        elif stars <= 1 and rng.random() < 0.45:
            parts.append(pick(rng, C["rec_no"]))
            rec = False
        sent = {4: "positive", 3: "positive", 2: "mixed", 1: "negative", 0: "negative"}[stars]
        also = ["mixed"] if stars in (1, 3) else []
        attrs = dict(stars=stars, sentiment=sent, sentiment_also=also, aspect=aspect, recommend=rec)
        return join(*parts), attrs
    return build


REVIEWS_Q = {}
REVIEWS_Q["en"] = dict(
    stars_phr=["If this customer left a star rating, what would it be?", "Guess the rating that goes with this review.", "What star rating fits this text best?", "Map this review to a 1-5 rating."],
    stars_scales=[
        (["1 star - hated it", "2 stars - disappointed", "3 stars - okay, mixed", "4 stars - liked it", "5 stars - loved it"], None),
        (["★ Awful", "★★ Below expectations", "★★★ Middling", "★★★★ Good with a small flaw", "★★★★★ Flawless"], None),
        (["One star", "Two stars", "Three stars", "Four stars", "Five stars"], None),
    ],
    pol_phr=["Where does this review fall between negative and positive?", "Rate the overall tone of the opinion."],
    pol_scales=[(["Negative", "In between", "Positive"], {0: 0, 1: 0, 2: 1, 3: 2, 4: 2}),
                (["Unhappy customer", "Mixed feelings", "Happy customer"], {0: 0, 1: 0, 2: 1, 3: 2, 4: 2})],
    sent_phr=["How does the writer feel about the purchase overall?", "Classify the opinion expressed here.", "What kind of review is this?"],
    sent_pool={"positive": ["The writer is pleased overall", "Mostly praise"], "negative": ["The writer is unhappy overall", "Mostly criticism"],
               "mixed": ["Praise and criticism in roughly equal measure", "Balanced good and bad points"], "neutral": ["Just facts, no opinion given", "Describes the item without judging it"]},
    aspect_phr=["What is the reviewer's main gripe?", "Which problem does the review point out?", "What does the customer criticise?"],
    aspect_pool={"price": ["What it costs, or whether it is worth the money"], "durability": ["Something broke, wore out or stopped working"], "comfort": ["Physical comfort when using it"],
                 "delivery": ["Shipping time or the state it arrived in"], "customer_service": ["How the company handled help requests"], "noise": ["How loud it is"],
                 "size_fit": ["Size, fit or capacity"], "battery": ["Battery life or charging"], "taste": ["Flavour or quality of the food"],
                 "cleanliness": ["Dirt, hygiene or tidiness"], "staff": ["Behaviour or speed of the staff"], "ease_of_use": ["How easy it is to use or set up"],
                 "performance": ["How well it does its main job"]},
    rec_phr=["Would this reviewer tell others to buy it?", "Is the item recommended by the reviewer?", "Does the writer endorse the product to other people?"],
    rec_mean=[("The reviewer advises others to get it", "The reviewer advises against it")],
    sent_noul={
        "positive": (["Is the customer satisfied overall?", "Is this a favourable review?"], [("The opinion is mainly favourable", "The opinion is not mainly favourable")]),
        "negative": (["Is this a complaint overall?", "Is the reviewer unhappy with what they got?"], [("The opinion is mainly unfavourable", "The opinion is not mainly unfavourable")]),
        "neutral": (["Is this text purely descriptive, with no opinion?"], None),
        "mixed": (["Does the reviewer weigh up good and bad points about equally?"], None),
    },
)
REVIEWS_Q["es"] = dict(
    stars_phr=["Si el cliente pusiera estrellas, ¿cuántas serían?", "¿Qué valoración de 1 a 5 encaja con esta reseña?"],
    stars_scales=[(["1 estrella: lo odió", "2 estrellas: decepcionado", "3 estrellas: regular, opiniones mezcladas", "4 estrellas: le gustó", "5 estrellas: le encantó"], None),
                  (["Una estrella", "Dos estrellas", "Tres estrellas", "Cuatro estrellas", "Cinco estrellas"], None)],
    pol_phr=["¿Dónde queda esta reseña entre negativa y positiva?"],
    pol_scales=[(["Negativa", "Intermedia", "Positiva"], {0: 0, 1: 0, 2: 1, 3: 2, 4: 2})],
    sent_phr=["¿Qué opina el autor de su compra en conjunto?", "Clasifica la opinión de este texto."],
    sent_pool={"positive": ["En general está satisfecho"], "negative": ["En general está descontento"], "mixed": ["Elogios y críticas a partes iguales"], "neutral": ["Solo datos, sin opinión"]},
    aspect_phr=["¿De qué se queja principalmente el cliente?", "¿Qué problema señala la reseña?"],
    aspect_pool={"price": ["El precio o la relación calidad-precio"], "durability": ["Algo se rompió o dejó de funcionar"], "comfort": ["La comodidad al usarlo"],
                 "delivery": ["El envío o el estado en que llegó"], "customer_service": ["La atención posventa"], "noise": ["El ruido"], "size_fit": ["La talla, el tamaño o la capacidad"],
                 "battery": ["La batería"], "cleanliness": ["La limpieza"], "staff": ["El trato del personal"], "ease_of_use": ["La facilidad de uso"], "performance": ["Lo bien que cumple su función"]},
    rec_phr=["¿Aconseja el autor a otros que lo compren?", "¿Recomienda quien escribe el producto?"],
    rec_mean=[("Anima a otros a comprarlo", "Desaconseja comprarlo")],
    sent_noul={"positive": (["¿Está el cliente satisfecho en general?"], [("La opinión es mayoritariamente favorable", "La opinión no es mayoritariamente favorable")]),
               "negative": (["¿Es en conjunto una queja?"], None), "neutral": (["¿Es un texto puramente descriptivo, sin opinión?"], None)},
)
REVIEWS_Q["pt"] = dict(
    stars_phr=["Se o cliente desse estrelas, quantas seriam?", "Qual nota de 1 a 5 combina com esta avaliação?"],
    stars_scales=[(["1 estrela: detestou", "2 estrelas: decepcionado", "3 estrelas: razoável, opinião dividida", "4 estrelas: gostou", "5 estrelas: amou"], None),
                  (["Uma estrela", "Duas estrelas", "Três estrelas", "Quatro estrelas", "Cinco estrelas"], None)],
    pol_phr=["Onde fica esta avaliação entre negativa e positiva?"],
    pol_scales=[(["Negativa", "Intermediária", "Positiva"], {0: 0, 1: 0, 2: 1, 3: 2, 4: 2})],
    sent_phr=["O que o autor acha da compra no geral?", "Classifique a opinião deste texto."],
    sent_pool={"positive": ["No geral, satisfeito"], "negative": ["No geral, insatisfeito"], "mixed": ["Elogios e críticas na mesma medida"], "neutral": ["Só informações, sem opinião"]},
    aspect_phr=["Do que o cliente mais reclama?", "Qual problema a avaliação aponta?"],
    aspect_pool={"price": ["Preço ou custo-benefício"], "durability": ["Algo quebrou ou parou de funcionar"], "comfort": ["Conforto ao usar"],
                 "delivery": ["Entrega ou estado em que chegou"], "customer_service": ["Atendimento pós-venda"], "noise": ["Barulho"], "size_fit": ["Tamanho, forma ou capacidade"],
                 "battery": ["Bateria"], "cleanliness": ["Limpeza"], "staff": ["Atendimento da equipe"], "ease_of_use": ["Facilidade de uso"], "performance": ["Se cumpre bem sua função"]},
    rec_phr=["O autor aconselha outras pessoas a comprar?", "Quem escreve recomenda o produto?"],
    rec_mean=[("Incentiva outros a comprar", "Desaconselha a compra")],
    sent_noul={"positive": (["O cliente está satisfeito no geral?"], [("A opinião é principalmente favorável", "A opinião não é principalmente favorável")]),
               "negative": (["No conjunto, é uma reclamação?"], None), "neutral": (["O texto é puramente descritivo, sem opinião?"], None)},
)
REVIEWS_Q["fr"] = dict(
    stars_phr=["Si le client mettait des étoiles, combien en mettrait-il ?", "Quelle note de 1 à 5 correspond à cet avis ?"],
    stars_scales=[(["1 étoile : détesté", "2 étoiles : déçu", "3 étoiles : moyen, avis partagé", "4 étoiles : apprécié", "5 étoiles : adoré"], None),
                  (["Une étoile", "Deux étoiles", "Trois étoiles", "Quatre étoiles", "Cinq étoiles"], None)],
    pol_phr=["Où se situe cet avis entre négatif et positif ?"],
    pol_scales=[(["Négatif", "Entre les deux", "Positif"], {0: 0, 1: 0, 2: 1, 3: 2, 4: 2})],
    sent_phr=["Que pense l'auteur de son achat dans l'ensemble ?", "Classez l'opinion exprimée ici."],
    sent_pool={"positive": ["Globalement satisfait"], "negative": ["Globalement mécontent"], "mixed": ["Éloges et critiques à parts égales"], "neutral": ["Que des faits, aucune opinion"]},
    aspect_phr=["De quoi le client se plaint-il surtout ?", "Quel problème l'avis signale-t-il ?"],
    aspect_pool={"price": ["Le prix ou le rapport qualité-prix"], "durability": ["Quelque chose a cassé ou ne marche plus"], "comfort": ["Le confort d'utilisation"],
                 "delivery": ["La livraison ou l'état à l'arrivée"], "customer_service": ["Le service après-vente"], "noise": ["Le bruit"], "size_fit": ["La taille ou la capacité"],
                 "battery": ["La batterie"], "cleanliness": ["La propreté"], "staff": ["L'attitude du personnel"], "ease_of_use": ["La facilité d'utilisation"], "performance": ["L'efficacité dans sa fonction"]},
    rec_phr=["L'auteur conseille-t-il aux autres de l'acheter ?", "La personne recommande-t-elle le produit ?"],
    rec_mean=[("Encourage les autres à l'acheter", "Déconseille l'achat")],
    sent_noul={"positive": (["Le client est-il satisfait dans l'ensemble ?"], [("L'avis est surtout favorable", "L'avis n'est pas surtout favorable")]),
               "negative": (["Est-ce globalement une réclamation ?"], None), "neutral": (["Le texte est-il purement descriptif, sans opinion ?"], None)},
)
REVIEWS_Q["de"] = dict(
    stars_phr=["Wie viele Sterne gäbe diese Person vermutlich?", "Welche Bewertung von 1 bis 5 passt zu diesem Text?"],
    stars_scales=[(["1 Stern: gehasst", "2 Sterne: enttäuscht", "3 Sterne: mittelmäßig, gemischt", "4 Sterne: gefallen", "5 Sterne: begeistert"], None),
                  (["Ein Stern", "Zwei Sterne", "Drei Sterne", "Vier Sterne", "Fünf Sterne"], None)],
    pol_phr=["Wo liegt diese Rezension zwischen negativ und positiv?"],
    pol_scales=[(["Negativ", "Dazwischen", "Positiv"], {0: 0, 1: 0, 2: 1, 3: 2, 4: 2})],
    sent_phr=["Wie steht die Person insgesamt zu ihrem Kauf?", "Ordnen Sie die geäußerte Meinung ein."],
    sent_pool={"positive": ["Insgesamt zufrieden"], "negative": ["Insgesamt unzufrieden"], "mixed": ["Lob und Kritik halten sich die Waage"], "neutral": ["Nur Fakten, keine Meinung"]},
    aspect_phr=["Worüber beschwert sich der Kunde hauptsächlich?", "Welches Problem nennt die Rezension?"],
    aspect_pool={"price": ["Preis oder Preis-Leistung"], "durability": ["Etwas ist kaputtgegangen oder funktioniert nicht mehr"], "comfort": ["Tragekomfort oder Bequemlichkeit"],
                 "delivery": ["Lieferung oder Zustand bei Ankunft"], "customer_service": ["Kundendienst"], "noise": ["Lautstärke"], "size_fit": ["Größe, Passform oder Fassungsvermögen"],
                 "battery": ["Akku"], "cleanliness": ["Sauberkeit"], "staff": ["Verhalten des Personals"], "ease_of_use": ["Bedienbarkeit"], "performance": ["Wie gut es seine Aufgabe erfüllt"]},
    rec_phr=["Rät die Person anderen zum Kauf?", "Empfiehlt der Verfasser das Produkt weiter?"],
    rec_mean=[("Rät anderen zum Kauf", "Rät vom Kauf ab")],
    sent_noul={"positive": (["Ist der Kunde insgesamt zufrieden?"], [("Die Meinung ist überwiegend positiv", "Die Meinung ist nicht überwiegend positiv")]),
               "negative": (["Ist das insgesamt eine Beschwerde?"], None), "neutral": (["Ist der Text rein beschreibend, ohne Meinung?"], None)},
)


def review_questions(Q):
    return [
        (2.5, score_q("stars", Q["stars_phr"], Q["stars_scales"], null_rate=0.1)),
        (1, score_q("stars", Q["pol_phr"], Q["pol_scales"])),
        (2, choice_q("sentiment", Q["sent_phr"], Q["sent_pool"])),
        (1.5, choice_q("aspect", Q["aspect_phr"], Q["aspect_pool"])),
        (1.2, noul_bool("recommend", Q["rec_phr"], Q["rec_mean"])),
        (1.2, noul_cat("sentiment", Q["sent_noul"])),
    ]


for _lg, _n in (("en", 800), ("es", 85), ("pt", 85), ("fr", 85), ("de", 85)):
    register("reviews", _lg, _n, review_builder(REVIEWS[_lg]), review_questions(REVIEWS_Q[_lg]))

# ======================================================================================
# MODERATION
# ======================================================================================
MOD = {}
MOD["en"] = dict(
    topics={
        "sourdough baking": ["My starter doubles in four hours but the loaf still comes out dense. Should I extend the bulk ferment?",
                             "Tried a 75% hydration dough today and the crumb finally opened up. Thanks for the tips last week!",
                             "Does anyone bake with spelt? Mine spreads flat no matter how tight I shape it.",
                             "I respectfully disagree that you need a Dutch oven. A tray of boiling water under the stone works fine for me.",
                             "What's everyone's go-to scoring pattern for a simple boule?",
                             "Finally got an ear on my baguettes by scoring at a shallower angle.", "How long can a starter sit in the fridge without feeding?", "Rye loaf attempt number three: better, but still gummy in the middle."],
        "road cycling": ["Planning my first 100 km ride this weekend. How much food should I bring?",
                         "Swapped to 28 mm tyres and the ride on cobbles is so much smoother.",
                         "Is it worth servicing an old 9-speed groupset or should I just upgrade?",
                         "I see your point about clipless pedals, but flats have been safer for me in city traffic.",
                         "Anyone riding the coastal loop on Sunday morning? Happy to share the pace.",
                         "Chain keeps skipping on the smallest cog. Cable tension or a worn cassette?", "Best way to carry a rain jacket without a saddle bag?", "Did my first club ride today and nobody got dropped. Lovely group."],
        "vegetable gardening": ["My tomato leaves are curling at the edges. Too much water or too little?",
                                "First harvest of the year: a whole basket of radishes and some very proud kids.",
                                "Which companion plants actually keep aphids off broad beans?",
                                "Good idea in theory, but in my experience copper tape didn't stop the slugs at all.",
                                "When do you usually plant garlic in a cold climate?",
                                "Raised beds or straight into the ground for heavy clay soil?", "My courgettes have powdery mildew again. Any organic fix?", "Sharing my seed-swap list: three kinds of beans and a purple carrot."],
        "photography": ["Is a 35 mm or a 50 mm prime better for street photos?",
                        "Here's my first attempt at long exposure over the harbour. Feedback welcome.",
                        "How do you keep your lens from fogging up on early winter shoots?",
                        "I'm not convinced shooting RAW is always necessary; JPEGs served me fine for family photos.",
                        "Which cheap tripod holds steady in wind?",
                        "My portraits look flat. Should I move the light to the side?", "Tried film for the first time and loved the grain.", "How do you back up photos while travelling without a laptop?"],
        "home networking": ["My mesh nodes keep dropping the connection to the main router every evening.",
                            "Finally ran ethernet to the office upstairs and the video calls are flawless now.",
                            "Is it safe to leave UPnP enabled on a home router?",
                            "I'd argue VLANs are overkill for most homes, but they do make sense if you have lots of smart devices.",
                            "Which channel width do you use on 5 GHz in a crowded apartment block?",
                            "Is powerline networking any good in an old house?", "Set up a guest network for the smart plugs, works nicely.", "My NAS drops off the network after every router reboot."],
        "board games": ["Looking for a two-player game that takes under 30 minutes. Suggestions?",
                        "We finally beat the campaign in our co-op game after eleven sessions!",
                        "How do you store all the tiny tokens without losing half of them?",
                        "Fair criticism of the rulebook, though I found the online FAQ answered most questions.",
                        "Is the expansion worth it if we only play with three people?",
                        "Which game would you use to teach complete beginners?", "Painted all the miniatures over the winter, pictures inside.", "Our group argues about the trading rule every time. How do you play it?"],
    },
    spam_hook=["🔥 LIMITED OFFER 🔥", "Congratulations, you have been selected!", "Make $500 a day from your phone!!!", "Cheap followers and likes,", "URGENT:", "Best prices on designer watches"],
    spam_body=["Genuine brand watches at 90% off.", "No experience needed, start earning today.", "Claim your free gift card now before it expires.", "Guaranteed 10k followers in 24 hours.",
               "Crypto signals with 300% returns every week.", "Miracle pills, lose 10 kg in a week."],
    spam_link=["Click here: bit.ly/x9-win-now", "Visit www.free-gifts-claim.biz", "DM me on WhatsApp +44 7700 900123", "Go to cheap-luxe-deals.shop", "Sign up at earnfast-daily.net"],
    spam_link_has=[True, True, False, True, True],
    promo=[("Shameless plug: I just launched my own sourdough course, first lesson free at my site breadwithben.com.", True),
           ("I make videos about exactly this on my YouTube channel, search 'Pedal with Pete' and hit subscribe!", False),
           ("If you need a pro to fix it, my company GreenThumb Gardens does free quotes across the county.", False),
           ("I sell presets that solve this in one click, link in my profile.", False),
           ("Wrote a whole e-book on home Wi-Fi, it's 20% off this week on my store: wifi-made-easy.com", True),
           ("I designed a little card game myself and the Kickstarter goes live Friday, please back it: kickstarter.com/mini-meeple", True)],
    harass=["@{u} you're an absolute idiot and everyone here knows it.", "@{u} nobody wants you here, crawl back under your rock.",
            "@{u} shut up, you clueless loser.", "@{u} people like you are too stupid to be allowed online.",
            "@{u} get lost, you pathetic clown.", "@{u} you're a disgrace and a liar, just leave.",
            "@{u} every time you post I'm reminded how brainless some people are.", "@{u} you ugly troll, I know where you live, watch yourself."],
    tox1=["Wow, what a brilliant question. Truly nobody has ever asked that before.", "Sure, because that worked so well last time. 🙄",
          "Did you even read the thread before posting?", "Whatever, believe what you want.", "lol ok, good luck with that.",
          "This again? Use the search function, seriously.", "Oh great, another expert who watched one video.", "Not sure why anyone would bother answering this."],
    tox2=["This is the dumbest advice I've read all week.", "What a garbage take, honestly.", "Your photo is a blurry mess, did you shoot it with a potato?",
          "That's complete nonsense and you should stop spreading it.", "This whole guide is rubbish from start to finish.", "Worst build I've ever seen, what a joke.", "Absolute trash opinion, delete this.", "This pile of nonsense belongs in the bin."],
    promo_lead=["Had the same problem last year.", "Great question!", "Funny you should ask.", "Been there.", "Good thread, everyone."],
    users=["mike_r", "gardengirl", "ol1ver", "sam.k", "bikerdude88", "ana_p", "thefox", "lens_lover"],
)


def mod_builder(C):
    topics = sorted(C["topics"])

    def build(rng):
        kind = rng.choices(["ok", "spam", "promo", "harass", "tox1", "tox2"], weights=[4, 2, 2, 2, 1.2, 1.2])[0]
        fmt = {}
        topic = pick(rng, topics)
        if kind == "ok":
            post_topic = pick(rng, topics)
            text = pick(rng, C["topics"][post_topic])
            a = dict(cat="ok", tox=0, attack=False, spam=False, promo=False, link=False)
            if rng.random() < 0.35:
                forum = topic if rng.random() < 0.5 else post_topic
                a["cat"] = "ok" if forum == post_topic else "off_topic"
                return {"forum": forum, "author": pick(rng, C["users"]), "message": text}, a
            a["cat_also"] = ["off_topic"]
            return text, a
        if kind == "spam":
            i = rng.randrange(len(C["spam_link"]))
            parts = [pick(rng, C["spam_hook"]) if rng.random() < 0.7 else "", pick(rng, C["spam_body"]), C["spam_link"][i]]
            return join(*parts), dict(cat="spam", cat_also=["self_promotion"], tox=0, attack=False, spam=True, link=C["spam_link_has"][i])
        if kind == "promo":
            text, has_link = pick(rng, C["promo"])
            lead = pick(rng, C["promo_lead"]) if rng.random() < 0.6 else ""
            return join(lead, text), dict(cat="self_promotion", cat_also=["spam"], tox=0, attack=False, promo=True, link=has_link)
        if kind == "harass":
            text = pick(rng, C["harass"]).format(u=pick(rng, C["users"]))
            return text, dict(cat="harassment", tox=3, attack=True, spam=False, promo=False, link=False)
        at = ("@" + pick(rng, C["users"])) if rng.random() < 0.5 else ""
        if kind == "tox1":
            return join(at, pick(rng, C["tox1"])), dict(tox=1, spam=False, link=False)
        return join(at, pick(rng, C["tox2"])), dict(tox=2, spam=False, link=False)
    return build


MOD_Q = {}
MOD_Q["en"] = dict(
    cat_phr=["Which moderation label fits this post?", "How should the moderators classify this comment?", "Sort this community post into a category."],
    cat_pool={"ok": ["An ordinary post that stays on the subject", "Fine to keep, nothing wrong with it"], "spam": ["Scams, mass advertising or dodgy links", "Unsolicited commercial junk"],
              "harassment": ["Abuse aimed at another member", "Insults or bullying of a person"], "self_promotion": ["The author advertising their own business, channel or product", "Plugging one's own stuff"],
              "off_topic": ["Doesn't belong in this particular forum", "Unrelated to the forum's subject"]},
    tox_phr=["How hostile is this reply?", "Grade the rudeness of this comment.", "What level of toxicity does this message show?"],
    tox_scales=[(["Not toxic: civil or neutral", "Slightly rude: sarcasm, eye-rolling or dismissiveness", "Hostile: harsh insults about someone's ideas or work", "Severe: direct abuse of a person"], None),
                (["Civil", "Snarky", "Aggressive", "Abusive"], None),
                (["Harmless", "Somewhat rude", "Clearly abusive"], {0: 0, 1: 1, 2: 1, 3: 2})],
    attack_phr=["Does the comment insult another user personally?", "Is someone being called names here?", "Is this reply an attack on a person?"],
    attack_mean=[("A person is insulted or demeaned directly", "No person is insulted directly (disagreeing with ideas is fine)")],
    spam_phr=["Is this junk advertising?", "Should this be removed as spam?", "Is the post a scam or bulk ad?"],
    spam_mean=[("Scam, bulk advertising or junk links", "Not spam")],
    promo_phr=["Is the author plugging their own product or channel?", "Does the poster advertise something they own?"],
    promo_mean=[("The author promotes their own business, product or channel", "No self-promotion")],
    link_phr=["Does the post contain a web link or address?", "Is there a URL in this message?"],
    link_mean=[("A website, URL or short link appears", "No website or link appears")],
)


def mod_questions(Q):
    return [
        (3, choice_q("cat", Q["cat_phr"], Q["cat_pool"], null_rate=0.05)),
        (2.2, score_q("tox", Q["tox_phr"], Q["tox_scales"])),
        (1, noul_bool("attack", Q["attack_phr"], Q["attack_mean"])),
        (1, noul_bool("spam", Q["spam_phr"], Q["spam_mean"])),
        (0.8, noul_bool("promo", Q["promo_phr"], Q["promo_mean"])),
        (0.7, noul_bool("link", Q["link_phr"], Q["link_mean"])),
    ]

MOD["es"] = dict(
    topics={"cocina": ["¿Alguien sabe por qué se me corta la mayonesa casera?", "Hoy hice mi primera paella para diez personas y no sobró nada.", "Con todo respeto, creo que el sofrito no necesita tanto tiempo; a mí me sale bien en diez minutos."],
            "ciclismo": ["¿Qué presión de neumáticos usáis para rodar por grava?", "Este domingo subí el puerto por primera vez sin pararme.", "Entiendo tu punto, pero yo prefiero pedales de plataforma en ciudad."],
            "jardinería": ["Las hojas de mis tomateras se están poniendo amarillas. ¿Exceso de riego?", "¿Cuándo plantáis los ajos en zona de interior?", "Este año las fresas han salido dulcísimas."]},
    spam_hook=["🔥 ¡OFERTA LIMITADA! 🔥", "¡Enhorabuena, has sido seleccionado!", "¡Gana 300 € al día desde casa!"],
    spam_body=["Relojes de marca con un 90 % de descuento.", "Sin experiencia, empieza a cobrar hoy mismo.", "Pastillas milagrosas para adelgazar 8 kilos en una semana."],
    spam_link=["Entra ya en www.regalos-gratis-ya.biz", "Escríbeme por WhatsApp al +34 600 000 111", "Pincha aquí: bit.ly/gana-ya-33"],
    spam_link_has=[True, False, True],
    promo=[("Por cierto, tengo un canal de YouTube de recetas, buscadlo como 'Cocina con Marta' y suscribíos.", False),
           ("Si necesitáis un profesional, mi empresa de jardinería hace presupuestos gratis en toda la provincia: jardinesluz.es", True),
           ("Vendo mis propias rutas de ciclismo en GPX en mi tienda online, el enlace está en mi perfil.", False)],
    promo_lead=["A mí me pasó lo mismo.", "¡Buena pregunta!", "Justo de esto sé un poco."],
    harass=["@{u} eres un imbécil y aquí lo sabe todo el mundo.", "@{u} nadie te quiere en este foro, lárgate.", "@{u} cállate ya, payaso ignorante.", "@{u} das pena, mentiroso, vete de aquí."],
    tox1=["Vaya, qué pregunta tan original. Nunca nadie la había hecho.", "¿Te has leído el hilo antes de escribir?", "Ya, claro, lo que tú digas."],
    tox2=["Es el consejo más absurdo que he leído en toda la semana.", "Menuda tontería, deja de difundir eso.", "Esa receta es una basura de principio a fin."],
    users=["pepe_g", "lau.ma", "ciclista77", "huerta_sol"],
)
MOD["pt"] = dict(
    topics={"culinária": ["Alguém sabe por que minha maionese caseira desanda?", "Fiz minha primeira feijoada para doze pessoas e não sobrou nada.", "Com todo o respeito, acho que o arroz não precisa ficar de molho; aqui sempre deu certo sem isso."],
            "ciclismo": ["Que pressão de pneu vocês usam no cascalho?", "Domingo subi a serra pela primeira vez sem parar.", "Entendo seu ponto, mas prefiro pedal plataforma na cidade."],
            "jardinagem": ["As folhas do meu tomateiro estão amarelando. Excesso de água?", "Qual a melhor época para plantar alho no Sul?", "Este ano os morangos saíram docinhos."]},
    spam_hook=["🔥 OFERTA RELÂMPAGO 🔥", "Parabéns, você foi selecionado!", "Ganhe R$ 500 por dia sem sair de casa!"],
    spam_body=["Relógios de grife com 90% de desconto.", "Sem experiência, comece a lucrar hoje.", "Cápsulas milagrosas para perder 8 kg em uma semana."],
    spam_link=["Acesse já www.brindes-gratis-agora.biz", "Chama no WhatsApp (11) 90000-0000", "Clique aqui: bit.ly/ganhe-ja-77"],
    spam_link_has=[True, False, True],
    promo=[("Aliás, tenho um canal de receitas no YouTube, procurem 'Cozinha da Ju' e se inscrevam.", False),
           ("Se precisarem de um profissional, minha empresa de paisagismo faz orçamento grátis: jardimverde.com.br", True),
           ("Vendo minhas próprias rotas de pedal em GPX na minha loja, o link está no perfil.", False)],
    promo_lead=["Passei pelo mesmo problema.", "Boa pergunta!", "Disso eu entendo um pouco."],
    harass=["@{u} você é um idiota e todo mundo aqui sabe disso.", "@{u} ninguém te quer neste fórum, some daqui.", "@{u} cala a boca, seu palhaço ignorante.", "@{u} você é patético e mentiroso, vai embora."],
    tox1=["Nossa, que pergunta original. Ninguém nunca perguntou isso antes.", "Você leu o tópico antes de postar?", "Tá bom, acredita no que quiser."],
    tox2=["É o conselho mais idiota que li a semana toda.", "Que besteira, para de espalhar isso.", "Essa receita é um lixo do começo ao fim."],
    users=["ze_carlos", "bia.m", "pedal99", "horta_viva"],
)
MOD["fr"] = dict(
    topics={"cuisine": ["Quelqu'un sait pourquoi ma mayonnaise maison tranche à chaque fois ?", "J'ai fait mon premier bœuf bourguignon pour dix personnes, il n'en est rien resté.", "Sauf votre respect, je ne pense pas qu'il faille autant de beurre ; avec moitié moins ça marche très bien."],
            "vélo": ["Quelle pression de pneus utilisez-vous sur les chemins ?", "Dimanche, j'ai monté le col sans poser pied à terre pour la première fois.", "Je comprends ton argument, mais en ville je préfère les pédales plates."],
            "jardinage": ["Les feuilles de mes tomates jaunissent. Trop d'arrosage ?", "Quand plantez-vous l'ail en région froide ?", "Cette année, les fraises sont incroyablement sucrées."]},
    spam_hook=["🔥 OFFRE LIMITÉE 🔥", "Félicitations, vous avez été sélectionné !", "Gagnez 400 € par jour depuis chez vous !"],
    spam_body=["Montres de luxe à -90 %.", "Aucune expérience requise, commencez à gagner aujourd'hui.", "Gélules miracles : -8 kg en une semaine."],
    spam_link=["Rendez-vous sur www.cadeaux-gratuits-vite.biz", "Contactez-moi sur WhatsApp au +33 6 00 00 00 00", "Cliquez ici : bit.ly/gagnez-vite-12"],
    spam_link_has=[True, False, True],
    promo=[("D'ailleurs, j'ai une chaîne YouTube de recettes, cherchez « La cuisine de Léa » et abonnez-vous !", False),
           ("Si vous avez besoin d'un pro, mon entreprise de paysagisme fait des devis gratuits : jardins-durand.fr", True),
           ("Je vends mes propres parcours vélo en GPX sur ma boutique, lien dans mon profil.", False)],
    promo_lead=["J'ai eu exactement le même souci.", "Bonne question !", "Je m'y connais un peu là-dessus."],
    harass=["@{u} t'es un crétin fini et tout le monde ici le sait.", "@{u} personne ne veut de toi sur ce forum, dégage.", "@{u} ferme-la, espèce de clown ignare.", "@{u} tu es pathétique et menteur, va-t'en."],
    tox1=["Ah, quelle question originale. Personne ne l'avait jamais posée.", "Tu as lu le fil avant de poster ?", "Mouais, crois ce que tu veux."],
    tox2=["C'est le conseil le plus stupide que j'ai lu de la semaine.", "Quelle ânerie, arrête de répandre ça.", "Cette recette est nulle du début à la fin."],
    users=["jb_rouge", "mel.l", "cycliste_69", "potager_zen"],
)
MOD["de"] = dict(
    topics={"Kochen": ["Weiß jemand, warum meine selbstgemachte Mayonnaise immer gerinnt?", "Heute zum ersten Mal Rouladen für zehn Leute gemacht, es blieb nichts übrig.", "Bei allem Respekt, ich glaube nicht, dass man so viel Butter braucht; mit der Hälfte klappt es bei mir prima."],
            "Radfahren": ["Welchen Reifendruck fahrt ihr auf Schotter?", "Am Sonntag bin ich den Pass zum ersten Mal ohne Absteigen hochgekommen.", "Ich verstehe dein Argument, aber in der Stadt fahre ich lieber mit Plattformpedalen."],
            "Gärtnern": ["Die Blätter meiner Tomaten werden gelb. Zu viel gegossen?", "Wann steckt ihr Knoblauch in kälteren Regionen?", "Die Erdbeeren sind dieses Jahr unglaublich süß geworden."]},
    spam_hook=["🔥 NUR HEUTE 🔥", "Herzlichen Glückwunsch, Sie wurden ausgewählt!", "Verdiene 400 € am Tag von zu Hause!"],
    spam_body=["Markenuhren mit 90 % Rabatt.", "Keine Erfahrung nötig, heute noch Geld verdienen.", "Wunderpillen: 8 kg weniger in einer Woche."],
    spam_link=["Jetzt auf www.gratis-geschenke-sofort.biz", "Schreib mir per WhatsApp an +49 151 0000000", "Hier klicken: bit.ly/gewinn-jetzt-5"],
    spam_link_has=[True, False, True],
    promo=[("Übrigens habe ich einen Kochkanal auf YouTube, sucht nach 'Küche mit Lena' und abonniert!", False),
           ("Falls ihr einen Profi braucht: Meine Gartenbaufirma macht kostenlose Angebote, gruen-werk.de", True),
           ("Ich verkaufe meine eigenen Radrouten als GPX in meinem Shop, Link im Profil.", False)],
    promo_lead=["Hatte genau dasselbe Problem.", "Gute Frage!", "Da kenne ich mich ein bisschen aus."],
    harass=["@{u} du bist ein kompletter Vollidiot und das weiß hier jeder.", "@{u} keiner will dich in diesem Forum, verschwinde.", "@{u} halt endlich die Klappe, du ahnungsloser Clown.", "@{u} du bist erbärmlich und ein Lügner, hau ab."],
    tox1=["Wow, was für eine originelle Frage. Hat ja noch nie jemand gestellt.", "Hast du den Thread überhaupt gelesen, bevor du postest?", "Ja ja, glaub halt, was du willst."],
    tox2=["Das ist der dümmste Rat, den ich diese Woche gelesen habe.", "Was für ein Unsinn, hör auf, das zu verbreiten.", "Dieses Rezept ist von vorne bis hinten Müll."],
    users=["tom_b", "gartenfee", "radler_92", "kochmax"],
)
MOD_Q["es"] = dict(
    cat_phr=["¿Qué etiqueta de moderación corresponde a esta publicación?", "¿Cómo deberían clasificar los moderadores este comentario?"],
    cat_pool={"ok": ["Aportación normal y sobre el tema"], "spam": ["Timos, anuncios masivos o enlaces sospechosos"], "harassment": ["Insultos o acoso a otra persona"],
              "self_promotion": ["El autor anuncia su propio negocio, canal o producto"], "off_topic": ["No tiene que ver con el tema del foro"]},
    tox_phr=["¿Qué tan hostil es esta respuesta?", "Valora la grosería de este comentario."],
    tox_scales=[(["Nada tóxico: educado o neutral", "Algo borde: sarcasmo o desdén", "Hostil: insultos duros a las ideas o al trabajo de alguien", "Grave: insultos directos a una persona"], None),
                (["Inofensivo", "Algo grosero", "Claramente abusivo"], {0: 0, 1: 1, 2: 1, 3: 2})],
    attack_phr=["¿Insulta el comentario a otro usuario personalmente?"], attack_mean=[("Se insulta o humilla directamente a alguien", "No se insulta a nadie directamente")],
    spam_phr=["¿Es publicidad basura?", "¿Habría que borrarlo por spam?"], spam_mean=[("Estafa, publicidad masiva o enlaces basura", "No es spam")],
    promo_phr=["¿Se está anunciando el autor a sí mismo?"], promo_mean=[("El autor promociona su propio negocio, producto o canal", "No hay autopromoción")],
    link_phr=["¿Contiene la publicación un enlace o una dirección web?"], link_mean=None,
)
MOD_Q["pt"] = dict(
    cat_phr=["Qual rótulo de moderação se aplica a esta postagem?", "Como os moderadores devem classificar este comentário?"],
    cat_pool={"ok": ["Contribuição normal e no assunto"], "spam": ["Golpes, propaganda em massa ou links suspeitos"], "harassment": ["Ofensas ou perseguição a outra pessoa"],
              "self_promotion": ["O autor divulga o próprio negócio, canal ou produto"], "off_topic": ["Nada a ver com o assunto do fórum"]},
    tox_phr=["Quão hostil é esta resposta?", "Avalie a grosseria deste comentário."],
    tox_scales=[(["Nada tóxico: educado ou neutro", "Um pouco grosseiro: sarcasmo ou desdém", "Hostil: ataques duros às ideias ou ao trabalho de alguém", "Grave: ofensas diretas a uma pessoa"], None),
                (["Inofensivo", "Meio grosseiro", "Claramente ofensivo"], {0: 0, 1: 1, 2: 1, 3: 2})],
    attack_phr=["O comentário ofende outro usuário pessoalmente?"], attack_mean=[("Alguém é ofendido ou humilhado diretamente", "Ninguém é ofendido diretamente")],
    spam_phr=["É propaganda lixo?", "Isto deve ser removido como spam?"], spam_mean=[("Golpe, propaganda em massa ou links suspeitos", "Não é spam")],
    promo_phr=["O autor está fazendo propaganda de si mesmo?"], promo_mean=[("O autor divulga o próprio negócio, produto ou canal", "Não há autopromoção")],
    link_phr=["A postagem tem algum link ou endereço de site?"], link_mean=None,
)
MOD_Q["fr"] = dict(
    cat_phr=["Quelle étiquette de modération convient à ce message ?", "Comment les modérateurs doivent-ils classer ce commentaire ?"],
    cat_pool={"ok": ["Message ordinaire qui reste dans le thème"], "spam": ["Arnaques, pub de masse ou liens douteux"], "harassment": ["Insultes ou harcèlement envers quelqu'un"],
              "self_promotion": ["L'auteur fait la pub de sa propre entreprise, chaîne ou produit"], "off_topic": ["Sans rapport avec le thème du forum"]},
    tox_phr=["À quel point cette réponse est-elle hostile ?", "Évaluez la grossièreté de ce commentaire."],
    tox_scales=[(["Pas toxique : poli ou neutre", "Un peu désagréable : sarcasme ou mépris", "Hostile : attaques dures contre les idées ou le travail de quelqu'un", "Grave : insultes directes envers une personne"], None),
                (["Inoffensif", "Assez impoli", "Clairement injurieux"], {0: 0, 1: 1, 2: 1, 3: 2})],
    attack_phr=["Le commentaire insulte-t-il personnellement un autre membre ?"], attack_mean=[("Quelqu'un est insulté ou rabaissé directement", "Personne n'est insulté directement")],
    spam_phr=["Est-ce de la pub indésirable ?", "Faut-il le supprimer comme spam ?"], spam_mean=[("Arnaque, pub de masse ou liens douteux", "Pas du spam")],
    promo_phr=["L'auteur fait-il sa propre publicité ?"], promo_mean=[("L'auteur promeut sa propre entreprise, son produit ou sa chaîne", "Aucune autopromotion")],
    link_phr=["Le message contient-il un lien ou une adresse web ?"], link_mean=None,
)
MOD_Q["de"] = dict(
    cat_phr=["Welches Moderationslabel passt zu diesem Beitrag?", "Wie sollten die Moderatoren diesen Kommentar einordnen?"],
    cat_pool={"ok": ["Gewöhnlicher Beitrag, der beim Thema bleibt"], "spam": ["Betrug, Massenwerbung oder dubiose Links"], "harassment": ["Beleidigung oder Mobbing einer Person"],
              "self_promotion": ["Der Autor wirbt für sein eigenes Geschäft, seinen Kanal oder sein Produkt"], "off_topic": ["Hat mit dem Thema des Forums nichts zu tun"]},
    tox_phr=["Wie feindselig ist diese Antwort?", "Wie unhöflich ist dieser Kommentar?"],
    tox_scales=[(["Nicht toxisch: höflich oder neutral", "Leicht unhöflich: Sarkasmus oder Herablassung", "Feindselig: harte Abwertung der Ideen oder Arbeit anderer", "Schwer: direkte Beleidigung einer Person"], None),
                (["Harmlos", "Etwas unhöflich", "Klar beleidigend"], {0: 0, 1: 1, 2: 1, 3: 2})],
    attack_phr=["Beleidigt der Kommentar ein anderes Mitglied persönlich?"], attack_mean=[("Jemand wird direkt beleidigt oder herabgesetzt", "Niemand wird direkt beleidigt")],
    spam_phr=["Ist das Werbemüll?", "Sollte das als Spam gelöscht werden?"], spam_mean=[("Abzocke, Werbeflut oder zwielichtige Links", "Kein Spam")],
    promo_phr=["Macht der Autor Werbung in eigener Sache?"], promo_mean=[("Der Autor bewirbt sein eigenes Geschäft, Produkt oder seinen Kanal", "Keine Eigenwerbung")],
    link_phr=["Enthält der Beitrag einen Link oder eine Webadresse?"], link_mean=None,
)

for _lg, _n in (("en", 700), ("es", 80), ("pt", 80), ("fr", 80), ("de", 80)):
    register("moderation", _lg, _n, mod_builder(MOD[_lg]), mod_questions(MOD_Q[_lg]), max_uses=3)

# ======================================================================================
# URGENCY / SEVERITY  (level 0 low .. 3 critical)
# ======================================================================================
URG = {}
URG["en"] = dict(
    cores={
        0: [("Small typo on the pricing page: 'anual' should be 'annual'.", {}), ("Could we add a dark theme to the admin panel at some point?", {}),
            ("The footer still says 2023. Not urgent, just noticed it.", {}), ("Idea for the next sprint: let users pin their favourite reports.", {}),
            ("The tooltip on the export button is slightly cut off on very narrow screens.", {}), ("Question for whenever someone has time: is there a keyboard shortcut for search?", {}),
            ("The logo in the welcome email looks a bit blurry on retina displays.", {}), ("Please update the office plant-watering rota when you get a chance.", {}),
            ("Minor: the sort arrow in the table header points the wrong way.", {}), ("Could the weekly newsletter use a slightly larger font next time?", {})],
        1: [("Two people in accounting can't print to the second-floor printer, but the one on the first floor works.", {}),
            ("CSV exports take about five minutes instead of thirty seconds. They do finish eventually.", {}),
            ("A handful of customers report that password reset emails land in spam.", {}),
            ("The dashboard charts fail to load in Safari; Chrome and Firefox are fine for now.", {}),
            ("Image uploads over 20 MB fail for some users; smaller files go through.", {}),
            ("One of the three build agents is offline, so builds queue a bit longer than usual.", {}),
            ("The mobile app shows the wrong currency symbol for users in Switzerland.", {}),
            ("Search results are occasionally out of date by an hour or so.", {}),
            ("The meeting room booking screen on floor 4 is frozen; people can still book from their laptops.", {}),
            ("A few invoices show the VAT line twice in the PDF, though the totals are correct.", {})],
        2: [("Card payments are failing for about 30% of checkout attempts since 10:00. The rest go through.", {}),
            ("Payroll has to be submitted by 5 pm today and the HR system won't let us approve timesheets.", {}),
            ("Our largest client can't log in to their portal and has a board presentation tomorrow morning.", {}),
            ("Emails to customers stopped sending two hours ago; orders still come in but nobody gets confirmations.", {}),
            ("The nightly backup failed for the second night in a row.", {}),
            ("The warehouse scanners can't sync, so pickers are writing orders on paper and falling behind.", {}),
            ("An employee clicked a phishing link and entered their password; we've seen no misuse yet.", dict(security=True)),
            ("The certificate on our API expires tonight at midnight and the renewal job failed.", {}),
            ("Support phone lines drop every call after about a minute, so customers can only reach us by email.", {}),
            ("Half of the point-of-sale terminals in the Lyon store are rebooting every few minutes.", {})],
        3: [("The whole website is returning 503 errors for every visitor. Nothing loads.", dict(down=True)),
            ("We're seeing someone download the entire customer database from an unknown IP right now.", dict(security=True)),
            ("The production database disk is full and all writes are failing; orders are being lost.", dict(down=True)),
            ("Nobody in any office can log in to anything since the identity provider went down.", dict(down=True)),
            ("Ransomware note on three file servers and files are being encrypted as we speak.", dict(security=True, down=True)),
            ("Checkout is completely broken for all customers in the middle of our biggest sale of the year.", dict(down=True)),
            ("The patient records system at the clinic is offline and doctors can't see medication lists.", dict(down=True)),
            ("Our payment API keys were pushed to a public repository an hour ago and are being used.", dict(security=True)),
            ("The mobile app crashes on launch for every user after this morning's release.", dict(down=True)),
            ("Factory line 2 has stopped entirely because the control system is unreachable.", dict(down=True))],
    },
    pre=["Hi all,", "Reporting from the Porto office:", "Heads-up:", "From the night shift:", "Sorry to bother you,", "Quick note:", "Hello ops,"],
    post=["Logs attached.", "Screenshot in the ticket.", "Let me know if you need more details.", "Thanks.", "Ticket created by Jana in support.", "I'm around if you need me."],
)


def urg_builder(C):
    def build(rng):
        level = rng.randrange(4)
        text, extra = pick(rng, C["cores"][level])
        a = dict(level=level, down=False, security=False)
        a.update(extra)
        if level == 2 and "down" not in extra:
            a["down"] = None
        a["level_key"] = ["p4", "p3", "p2", "p1"][level]
        a["today"] = {0: False, 1: None, 2: True, 3: True}[level]
        body = join(text, pick(rng, C["post"]) if rng.random() < 0.35 else "")
        return (pick(rng, C["pre"]) + "\n" + body) if rng.random() < 0.35 else body, a
    return build


URG_Q = {}
URG_Q["en"] = dict(
    lvl_phr=["How quickly does this need attention?", "Grade the severity of this report.", "What urgency level would you give this?", "How serious is this problem?"],
    lvl_scales=[(["Low: cosmetic, a question or an idea", "Medium: real issue with limited impact or a workaround", "High: serious impact, handle today", "Critical: outage, data loss or active breach; drop everything"], None),
                (["Can wait", "Soon", "Today", "Right now"], None),
                (["Trivial", "Moderate", "Severe", "Emergency"], None),
                (["Low", "Medium", "High or critical"], {0: 0, 1: 1, 2: 2, 3: 2})],
    prio_phr=["Assign a priority code.", "Which priority bucket does this incident go in?", "Set the ticket priority."],
    prio_pool={"p1": ["Emergency: everything stops, all hands now", "Outage, data loss or breach in progress"], "p2": ["Serious: fix within the working day", "Major impact but not a full outage"],
               "p3": ["Normal: a few days is fine", "Limited impact, workaround exists"], "p4": ["Backlog: whenever there's time", "Cosmetic issues, questions and ideas"]},
    down_phr=["Is a service completely unavailable?", "Is the service down for all of its users?", "Does the report describe a total outage?"],
    down_mean=[("Users cannot use the service at all", "The service still works, even if partly or slowly")],
    sec_phr=["Is this a security incident?", "Does this involve a possible breach or compromise?"],
    sec_mean=[("Stolen data, leaked credentials, malware or an intrusion are involved", "No security aspect")],
    today_phr=["Should this be handled before the end of today?", "Does this need action today?"],
    today_mean=[("Waiting until tomorrow would cause real harm", "It can safely wait beyond today")],
)


def urg_questions(Q):
    return [
        (3, score_q("level", Q["lvl_phr"], Q["lvl_scales"], null_rate=0.05)),
        (2, choice_q("level_key", Q["prio_phr"], Q["prio_pool"], null_rate=0.1)),
        (1, noul_bool("down", Q["down_phr"], Q["down_mean"])),
        (0.8, noul_bool("security", Q["sec_phr"], Q["sec_mean"])),
        (1, noul_bool("today", Q["today_phr"], Q["today_mean"])),
    ]
URG["es"] = dict(
    cores={0: [("Hay una errata en la página de precios: pone 'anaul' en vez de 'anual'.", {}), ("¿Se podría añadir un modo oscuro al panel algún día?", {}), ("El pie de página sigue diciendo 2023. Nada urgente.", {}),
               ("Idea para el próximo sprint: poder fijar los informes favoritos.", {}), ("El logo del correo de bienvenida se ve algo borroso.", {})],
           1: [("Dos personas de contabilidad no pueden imprimir en la impresora de la segunda planta; la de la primera funciona.", {}), ("Las exportaciones a CSV tardan cinco minutos en vez de treinta segundos, pero terminan.", {}),
               ("Algunos clientes dicen que el correo para restablecer la contraseña les llega a spam.", {}), ("Los gráficos no cargan en Safari; en Chrome van bien.", {}), ("Uno de los tres servidores de compilación está caído y las compilaciones tardan algo más.", {})],
           2: [("Desde las diez falla un 30 % de los pagos con tarjeta; el resto entra bien.", {}), ("Hay que enviar las nóminas hoy antes de las cinco y el sistema no deja aprobar las horas.", {}),
               ("Nuestro mayor cliente no puede entrar en su portal y mañana tiene una presentación ante su consejo.", {}), ("La copia de seguridad nocturna ha fallado por segunda noche seguida.", {}),
               ("Un empleado pinchó en un enlace de phishing y metió su contraseña; de momento no vemos uso indebido.", dict(security=True))],
           3: [("Toda la web devuelve errores 503 a todos los visitantes. No carga nada.", dict(down=True)), ("Alguien está descargando ahora mismo toda la base de datos de clientes desde una IP desconocida.", dict(security=True)),
               ("El disco de la base de datos de producción está lleno y se están perdiendo pedidos.", dict(down=True)), ("Nadie puede iniciar sesión en ningún sistema desde que se cayó el proveedor de identidad.", dict(down=True)),
               ("La app se cierra al abrirla para todos los usuarios desde la versión de esta mañana.", dict(down=True))]},
    pre=["Hola a todos:", "Aviso:", "Desde el turno de noche:", "Perdonad que moleste,"], post=["Adjunto los registros.", "Quedo atento por si necesitáis algo.", "Gracias."],
)
URG["pt"] = dict(
    cores={0: [("Tem um erro de digitação na página de preços: está 'anaul' em vez de 'anual'.", {}), ("Dá para colocar um modo escuro no painel algum dia?", {}), ("O rodapé ainda mostra 2023. Nada urgente.", {}),
               ("Ideia para a próxima sprint: deixar o usuário fixar os relatórios favoritos.", {}), ("O logo do e-mail de boas-vindas está meio borrado.", {})],
           1: [("Duas pessoas do financeiro não conseguem imprimir na impressora do segundo andar; a do primeiro funciona.", {}), ("A exportação em CSV leva cinco minutos em vez de trinta segundos, mas termina.", {}),
               ("Alguns clientes dizem que o e-mail de redefinição de senha cai no spam.", {}), ("Os gráficos não carregam no Safari; no Chrome está normal.", {}), ("Um dos três servidores de build está fora e os builds demoram um pouco mais.", {})],
           2: [("Desde as dez, cerca de 30% dos pagamentos com cartão estão falhando; o resto passa.", {}), ("A folha de pagamento tem que sair hoje até as cinco e o sistema não deixa aprovar os pontos.", {}),
               ("Nosso maior cliente não consegue acessar o portal e amanhã tem reunião com a diretoria.", {}), ("O backup noturno falhou pela segunda noite seguida.", {}),
               ("Um funcionário clicou num link de phishing e digitou a senha; por enquanto não vimos uso indevido.", dict(security=True))],
           3: [("O site inteiro está retornando erro 503 para todo mundo. Nada carrega.", dict(down=True)), ("Alguém está baixando agora toda a base de clientes a partir de um IP desconhecido.", dict(security=True)),
               ("O disco do banco de produção encheu e os pedidos estão se perdendo.", dict(down=True)), ("Ninguém consegue fazer login em nenhum sistema desde que o provedor de identidade caiu.", dict(down=True)),
               ("O app fecha ao abrir para todos os usuários desde a versão de hoje cedo.", dict(down=True))]},
    pre=["Oi, pessoal:", "Atenção:", "Do turno da noite:", "Desculpem incomodar,"], post=["Logs em anexo.", "Fico à disposição.", "Obrigado."],
)
URG["fr"] = dict(
    cores={0: [("Petite coquille sur la page des tarifs : « anuel » au lieu de « annuel ».", {}), ("Serait-il possible d'ajouter un mode sombre au tableau de bord un jour ?", {}), ("Le pied de page indique encore 2023. Rien d'urgent.", {}),
               ("Idée pour le prochain sprint : pouvoir épingler ses rapports favoris.", {}), ("Le logo de l'e-mail de bienvenue est un peu flou.", {})],
           1: [("Deux personnes de la compta ne peuvent pas imprimer au deuxième étage ; l'imprimante du premier fonctionne.", {}), ("Les exports CSV prennent cinq minutes au lieu de trente secondes, mais ils aboutissent.", {}),
               ("Quelques clients reçoivent l'e-mail de réinitialisation dans leurs spams.", {}), ("Les graphiques ne s'affichent pas sous Safari ; sous Chrome tout va bien.", {}), ("Un des trois serveurs de build est hors service, les builds attendent un peu plus.", {})],
           2: [("Depuis 10 h, environ 30 % des paiements par carte échouent ; les autres passent.", {}), ("La paie doit partir aujourd'hui avant 17 h et le logiciel RH refuse de valider les heures.", {}),
               ("Notre plus gros client n'arrive plus à se connecter à son portail et présente demain devant son conseil.", {}), ("La sauvegarde de nuit a échoué pour la deuxième nuit d'affilée.", {}),
               ("Un salarié a cliqué sur un lien d'hameçonnage et saisi son mot de passe ; aucun usage suspect pour l'instant.", dict(security=True))],
           3: [("Tout le site renvoie des erreurs 503 à tous les visiteurs. Plus rien ne s'affiche.", dict(down=True)), ("Quelqu'un est en train de télécharger toute la base clients depuis une IP inconnue.", dict(security=True)),
               ("Le disque de la base de production est plein et les commandes sont perdues.", dict(down=True)), ("Plus personne ne peut se connecter à quoi que ce soit depuis la panne du fournisseur d'identité.", dict(down=True)),
               ("L'appli plante au lancement pour tous les utilisateurs depuis la version de ce matin.", dict(down=True))]},
    pre=["Bonjour à tous,", "Pour info :", "De l'équipe de nuit :", "Désolé de vous déranger,"], post=["Journaux en pièce jointe.", "Je reste disponible.", "Merci."],
)
URG["de"] = dict(
    cores={0: [("Kleiner Tippfehler auf der Preisseite: dort steht 'jährilch' statt 'jährlich'.", {}), ("Könnte man dem Admin-Bereich irgendwann einen Dunkelmodus spendieren?", {}), ("In der Fußzeile steht noch 2023. Nicht eilig.", {}),
               ("Idee fürs nächste Sprint-Planning: Lieblingsberichte anheften können.", {}), ("Das Logo in der Willkommensmail wirkt etwas unscharf.", {})],
           1: [("Zwei Leute aus der Buchhaltung können nicht auf dem Drucker im zweiten Stock drucken; der im ersten geht.", {}), ("CSV-Exporte dauern fünf Minuten statt dreißig Sekunden, laufen aber durch.", {}),
               ("Einige Kunden bekommen die Mail zum Zurücksetzen des Passworts in den Spam-Ordner.", {}), ("Die Diagramme laden nicht in Safari; in Chrome klappt es.", {}), ("Einer von drei Build-Servern ist ausgefallen, Builds warten etwas länger.", {})],
           2: [("Seit 10 Uhr schlagen rund 30 % der Kartenzahlungen fehl; der Rest geht durch.", {}), ("Die Lohnabrechnung muss heute bis 17 Uhr raus und das HR-System lässt keine Freigaben zu.", {}),
               ("Unser größter Kunde kommt nicht mehr in sein Portal und präsentiert morgen vor dem Vorstand.", {}), ("Die nächtliche Sicherung ist die zweite Nacht in Folge fehlgeschlagen.", {}),
               ("Ein Mitarbeiter hat auf einen Phishing-Link geklickt und sein Passwort eingegeben; bisher kein Missbrauch erkennbar.", dict(security=True))],
           3: [("Die gesamte Website liefert allen Besuchern 503-Fehler. Nichts lädt.", dict(down=True)), ("Gerade lädt jemand von einer unbekannten IP die komplette Kundendatenbank herunter.", dict(security=True)),
               ("Die Platte der Produktionsdatenbank ist voll, Bestellungen gehen verloren.", dict(down=True)), ("Seit der Identitätsanbieter ausgefallen ist, kann sich niemand mehr irgendwo anmelden.", dict(down=True)),
               ("Seit dem Release heute früh stürzt die App bei allen Nutzern beim Start ab.", dict(down=True))]},
    pre=["Hallo zusammen,", "Zur Info:", "Von der Nachtschicht:", "Sorry für die Störung,"], post=["Logs hängen an.", "Bei Fragen bin ich erreichbar.", "Danke."],
)
URG_Q["es"] = dict(
    lvl_phr=["¿Con qué rapidez hay que atender esto?", "Califica la gravedad de este aviso."],
    lvl_scales=[(["Baja: estético, una duda o una idea", "Media: problema real con impacto limitado o con alternativa", "Alta: impacto serio, hay que resolverlo hoy", "Crítica: caída total, pérdida de datos o ataque en curso"], None),
                (["Puede esperar", "Pronto", "Hoy", "Ahora mismo"], None)],
    prio_phr=["Asigna un código de prioridad.", "¿En qué prioridad va esta incidencia?"],
    prio_pool={"p1": ["Emergencia: todo el mundo a ello ya"], "p2": ["Grave: resolver en el día"], "p3": ["Normal: puede esperar unos días"], "p4": ["Pendiente: cuando haya tiempo"]},
    down_phr=["¿Está el servicio caído para todos sus usuarios?"], down_mean=[("Nadie puede usar el servicio", "El servicio sigue funcionando, aunque sea a medias")],
    sec_phr=["¿Es un incidente de seguridad?"], sec_mean=[("Hay robo de datos, credenciales filtradas, malware o intrusión", "No hay aspecto de seguridad")],
    today_phr=["¿Hay que ocuparse de esto antes de que acabe el día?"], today_mean=None,
)
URG_Q["pt"] = dict(
    lvl_phr=["Com que rapidez isto precisa de atenção?", "Classifique a gravidade deste aviso."],
    lvl_scales=[(["Baixa: estético, dúvida ou ideia", "Média: problema real com impacto limitado ou contornável", "Alta: impacto sério, resolver hoje", "Crítica: fora do ar, perda de dados ou ataque em andamento"], None),
                (["Pode esperar", "Em breve", "Hoje", "Agora"], None)],
    prio_phr=["Atribua um código de prioridade.", "Em qual prioridade entra este incidente?"],
    prio_pool={"p1": ["Emergência: todos mobilizados já"], "p2": ["Grave: resolver no mesmo dia"], "p3": ["Normal: pode esperar alguns dias"], "p4": ["Fila: quando houver tempo"]},
    down_phr=["O serviço está fora do ar para todos os usuários?"], down_mean=[("Ninguém consegue usar o serviço", "O serviço ainda funciona, mesmo que parcialmente")],
    sec_phr=["É um incidente de segurança?"], sec_mean=[("Envolve roubo de dados, senhas vazadas, malware ou invasão", "Sem aspecto de segurança")],
    today_phr=["Isto precisa ser tratado ainda hoje?"], today_mean=None,
)
URG_Q["fr"] = dict(
    lvl_phr=["Avec quelle rapidité faut-il traiter ceci ?", "Évaluez la gravité de ce signalement."],
    lvl_scales=[(["Basse : cosmétique, question ou idée", "Moyenne : vrai problème à impact limité ou contournable", "Haute : impact sérieux, à traiter aujourd'hui", "Critique : panne totale, perte de données ou attaque en cours"], None),
                (["Peut attendre", "Bientôt", "Aujourd'hui", "Immédiatement"], None)],
    prio_phr=["Attribuez un code de priorité.", "Dans quelle priorité classer cet incident ?"],
    prio_pool={"p1": ["Urgence absolue : tout le monde s'y met"], "p2": ["Grave : à régler dans la journée"], "p3": ["Normal : quelques jours, c'est acceptable"], "p4": ["En attente : quand on aura le temps"]},
    down_phr=["Le service est-il totalement indisponible pour ses utilisateurs ?"], down_mean=[("Personne ne peut utiliser le service", "Le service marche encore, même partiellement")],
    sec_phr=["S'agit-il d'un incident de sécurité ?"], sec_mean=[("Vol de données, identifiants divulgués, logiciel malveillant ou intrusion", "Aucun enjeu de sécurité")],
    today_phr=["Faut-il s'en occuper avant ce soir ?"], today_mean=None,
)
URG_Q["de"] = dict(
    lvl_phr=["Wie schnell muss sich jemand darum kümmern?", "Bewerten Sie den Schweregrad dieser Meldung."],
    lvl_scales=[(["Gering: kosmetisch, eine Frage oder eine Idee", "Mittel: echtes Problem mit begrenzter Wirkung oder Umgehung", "Hoch: ernste Folgen, heute erledigen", "Kritisch: Totalausfall, Datenverlust oder laufender Angriff"], None),
                (["Kann warten", "Bald", "Heute", "Sofort"], None)],
    prio_phr=["Vergeben Sie einen Prioritätscode.", "In welche Prioritätsstufe gehört dieser Vorfall?"],
    prio_pool={"p1": ["Notfall: alle sofort ran"], "p2": ["Ernst: noch heute lösen"], "p3": ["Normal: ein paar Tage sind okay"], "p4": ["Rückstand: wenn Zeit ist"]},
    down_phr=["Ist der Dienst für alle Nutzer komplett ausgefallen?"], down_mean=[("Niemand kann den Dienst nutzen", "Der Dienst läuft noch, wenn auch eingeschränkt")],
    sec_phr=["Handelt es sich um einen Sicherheitsvorfall?"], sec_mean=[("Datendiebstahl, geleakte Zugangsdaten, Schadsoftware oder Einbruch", "Kein Sicherheitsbezug")],
    today_phr=["Muss das noch heute erledigt werden?"], today_mean=None,
)

for _lg, _n in (("en", 640), ("es", 75), ("pt", 75), ("fr", 75), ("de", 75)):
    register("urgency", _lg, _n, urg_builder(URG[_lg]), urg_questions(URG_Q[_lg]), max_uses=3)

# ======================================================================================
# INTENT
# ======================================================================================
# subdomain -> (choice phrasings, {intent: (description, yes/no question, [utterances])})
INTENT = {}
INTENT["en"] = {
    "banking": (["Which banking request is this?", "Classify this message sent to the bank's chat.", "What is the account holder trying to do?"], {
        "card_lost": ("Report a lost or stolen card", "Is the customer reporting a missing card?", ["Pretty sure my debit card fell out of my pocket at the cinema, can you block it?", "My wallet was stolen with my credit card inside.", "Can't find my card anywhere, can you freeze it?", "Someone nicked my bag, card included."]),
        "transfer": ("Move money to someone else or between accounts", "Does the user want to move money to someone?", ["I need to send 250 euros to my landlord today.", "How do I pay my sister back via bank transfer?", "Please move 1,000 from checking to my savings.", "Set up a payment of 80 pounds to Tom Walsh."]),
        "balance": ("Check how much money is in an account", "Is the customer asking about their balance?", ["How much do I have left in my current account?", "What's my savings balance right now?", "Can you tell me what's available on my card this month?"]),
        "dispute": ("Challenge a charge they don't recognise", "Is the customer contesting a payment?", ["There's a 94 dollar charge from a shop I've never been to.", "I was charged by a streaming service I cancelled in May, I want to dispute it.", "This card payment in Lisbon wasn't me."]),
        "loan": ("Ask about borrowing money", "Is the user interested in a loan?", ["What interest rate would I get on a car loan?", "Could I borrow about 15,000 to renovate the kitchen?", "Do you offer mortgages to self-employed people?"]),
        "open_account": ("Open a new account", "Does the person want to open an account?", ["I'd like to open a savings account for my son.", "Can I open a joint account online with my partner?", "What do I need to start a business account with you?"]),
    }),
    "travel": (["What does the traveller need?", "Which travel request does this message make?", "Classify this note to the travel desk."], {
        "book": ("Make a new reservation", "Is the traveller trying to book something new?", ["I'd like two seats to Vienna on the 14th, returning on the 20th.", "Can you find me a hotel near the conference centre for three nights?", "Book me on the earliest train to Edinburgh tomorrow."]),
        "cancel": ("Cancel an existing reservation", "Does the traveller want to call off a booking?", ["Please cancel my hotel in Rome, I can't travel any more.", "I need to cancel the return flight on my booking.", "We won't be going to the lake house after all, can you cancel it?"]),
        "change": ("Move or modify a reservation", "Does the person want to alter an existing booking?", ["Can I move my flight from Friday to Sunday?", "I need to add my daughter to our existing hotel booking.", "Switch my train seat to a window seat, same departure."]),
        "baggage": ("Questions or problems with luggage", "Is this about luggage?", ["My suitcase never showed up on the carousel in Madrid.", "How many kilos can I check in on an economy ticket?", "Can I bring my bike as checked luggage?"]),
        "refund_request": ("Get money back for a trip", "Is the traveller asking for their money back?", ["My flight was cancelled by you, so I'd like the fare refunded.", "The hotel had no hot water all week; I want part of the cost back.", "Can I get the money back for the tour that never happened?"]),
        "visa_info": ("Entry rules, visas and documents", "Is the traveller asking about entry documents?", ["Do I need a visa to visit Vietnam on a UK passport?", "Is a national ID card enough to fly to Croatia?", "How long must my passport be valid to enter Thailand?"]),
    }),
    "shopping": (["What does the shopper want?", "Pick the store request that fits this message.", "Which shop action is needed here?"], {
        "track": ("Find out where an order is", "Is the shopper asking where their order is?", ["Where's my order? It was supposed to arrive yesterday.", "Any news on the parcel with my new kettle?", "Has my shoe order left the warehouse yet?"]),
        "return_item": ("Send something back", "Does the customer want to return an item?", ["The jacket is too tight, how do I send it back?", "I'd like to return the lamp, it doesn't match the room.", "Can I return a gift without the receipt?"]),
        "stock": ("Ask whether something is available", "Is the shopper asking if something is in stock?", ["Do you have the blue sofa in the three-seater size?", "When will the 43 size of these boots be back?", "Is the 2 TB model available in your Bristol shop?"]),
        "discount": ("Ask about promotions or codes", "Is the customer asking about a discount?", ["Is there a student discount on laptops?", "My promo code says invalid, is the sale over?", "Do you do anything for Black Friday this year?"]),
        "change_address": ("Update where an order goes", "Does the shopper want the parcel sent somewhere else?", ["Can you send my order to my office instead of home?", "I typed the wrong house number, it should be 42 not 24.", "Please ship to my parents' address, I'm staying there this week."]),
        "product_question": ("Ask how a product works or what it does", "Is this a question about a product's features?", ["Is this blender strong enough to crush ice?", "Does the tent come with a footprint?", "Can the coffee grinder do fine espresso?"]),
    }),
    "hr": (["Which HR request is this?", "What does the employee want from HR?", "Classify this message to the people team."], {
        "leave": ("Book holiday or time off", "Is the employee asking for time off?", ["I'd like to take the week of 12 August off.", "Can I use two days of annual leave next Thursday and Friday?", "I need a day off for my son's school graduation."]),
        "payslip": ("Questions about pay or payslips", "Is this about salary or a payslip?", ["My payslip doesn't include last month's overtime.", "When will the pay rise show up on my salary?", "Where do I download my payslips for the mortgage application?"]),
        "sick": ("Report illness or absence", "Is the employee calling in sick?", ["I've got a fever and won't make it in today.", "My doctor signed me off for a week with a back injury.", "Woke up with a migraine, I'll be off sick this morning."]),
        "benefits": ("Pension, insurance and perks", "Is the employee asking about benefits?", ["How do I add my partner to the health insurance?", "Can I increase my pension contribution to 8%?", "Is the gym membership still part of our perks?"]),
        "resignation": ("Leaving the company", "Is the employee resigning?", ["Please take this as my formal notice; my last day will be 30 June.", "I've accepted a job elsewhere and would like to discuss my notice period.", "I'm handing in my resignation effective four weeks from today."]),
    }),
    "it_helpdesk": (["What kind of IT ticket is this?", "Which helpdesk category fits?", "Route this to the right IT queue."], {
        "password": ("Password or login problems", "Is this about getting into an account?", ["I've forgotten my Windows password again.", "My password expired and the reset page won't load.", "Locked out of my email after the holidays."]),
        "hardware": ("Broken or missing equipment", "Is a piece of equipment faulty or needed?", ["My laptop screen has a big crack after it fell.", "The docking station stopped charging my laptop.", "Could I get a second monitor for my desk?"]),
        "software_install": ("Install or license software", "Does the user want a program installed?", ["Can you install Visio on my machine?", "I need a licence for the PDF editor.", "Please put Python 3.12 on the analytics laptop."]),
        "network": ("Internet, Wi-Fi or VPN issues", "Is this a connectivity problem?", ["The VPN disconnects every ten minutes when I work from home.", "Wi-Fi in meeting room B is extremely slow.", "I can't reach the shared drive from the Manchester office."]),
        "access_request": ("Permission to a system or folder", "Is the user asking for access rights?", ["Please give me edit rights to the finance shared folder.", "I need access to the CRM for my new role.", "Can I be added to the marketing Slack channels?"]),
        "phishing_report": ("Report a suspicious message", "Is the user reporting a suspicious email?", ["Got an email from 'the CEO' asking me to buy gift cards. Looks fake.", "This message says my mailbox is full and wants my password, is it real?", "Someone texted me pretending to be IT and asking for a code."]),
    }),
    "healthcare": (["What does the patient want?", "Which clinic request is this?", "Classify this message to the practice."], {
        "book_appt": ("Make an appointment", "Does the patient want to book an appointment?", ["Could I see Dr Patel sometime next week?", "I'd like an appointment for my daughter's vaccinations.", "Is there a slot for a blood test on Thursday morning?"]),
        "cancel_appt": ("Cancel an appointment", "Is the patient cancelling an appointment?", ["I can't make my 3 pm appointment tomorrow, please cancel it.", "Please cancel my physio session on Monday.", "I won't need the follow-up visit any more, you can remove it."]),
        "reschedule": ("Move an appointment", "Does the patient want to move an appointment to another time?", ["Can I move my Tuesday appointment to Friday?", "Is it possible to push my check-up to later in the afternoon?", "Could we switch my dental cleaning to next month?"]),
        "prescription": ("Repeat or new prescription", "Is this a prescription request?", ["I'm running out of my blood pressure tablets, can I get a repeat?", "Could the doctor renew my inhaler prescription?", "I need more of my thyroid medication before I travel."]),
        "results": ("Ask about test results", "Is the patient asking about test results?", ["Are my blood test results back yet?", "Has anyone looked at the X-ray from last week?", "Could someone explain my cholesterol numbers?"]),
    }),
}
INTENT_MOD = {
    "en": dict(pre=["Hi,", "Hello,", "Quick question:", "Good morning,", "Hey,", "Sorry to bother you,"], post=["Thanks!", "Thank you.", "Cheers.", "Appreciate it."],
               other="The message is about something else"),
}
INTENT["es"] = {
    "banking": (["¿Qué gestión bancaria pide el cliente?", "Clasifica este mensaje enviado al chat del banco."], {
        "card_lost": ("Avisar de una tarjeta perdida o robada", "¿Avisa el cliente de que ha perdido la tarjeta?", ["Creo que me dejé la tarjeta en un taxi anoche, bloqueadla, por favor.", "Me han robado la cartera con la tarjeta de crédito dentro."]),
        "transfer": ("Enviar dinero a otra cuenta", "¿Quiere el usuario mandar dinero a alguien?", ["Tengo que enviarle 300 euros a mi casero hoy.", "Pasa 500 euros de la cuenta corriente a la de ahorro."]),
        "balance": ("Consultar el saldo", "¿Pregunta el cliente por su saldo?", ["¿Cuánto dinero me queda en la cuenta?", "¿Qué saldo tengo ahora mismo en la cuenta de ahorro?"]),
        "dispute": ("Reclamar un cargo que no reconoce", "¿Está reclamando un cargo?", ["Tengo un cargo de 60 euros de una tienda en la que nunca he estado.", "Este pago con tarjeta en Oporto no lo he hecho yo."]),
        "loan": ("Pedir información sobre un préstamo", "¿Le interesa un préstamo?", ["¿Qué interés tendría un préstamo para un coche?", "¿Podría pedir unos 12.000 euros para reformar la cocina?"]),
    }),
    "travel": (["¿Qué necesita el viajero?", "Clasifica esta consulta a la agencia de viajes."], {
        "book": ("Hacer una reserva nueva", "¿Quiere reservar algo nuevo?", ["Quiero dos billetes a Viena para el día 14, con vuelta el 20.", "Búscame un hotel cerca del congreso para tres noches."]),
        "cancel": ("Cancelar una reserva", "¿Quiere anular una reserva?", ["Cancelad mi hotel en Roma, al final no puedo viajar.", "Necesito anular el vuelo de vuelta de mi reserva."]),
        "change": ("Cambiar una reserva", "¿Quiere modificar una reserva que ya tiene?", ["¿Puedo pasar mi vuelo del viernes al domingo?", "Tengo que añadir a mi hija a la reserva del hotel."]),
        "baggage": ("Equipaje", "¿Es sobre el equipaje?", ["Mi maleta no apareció en la cinta en Madrid.", "¿Cuántos kilos puedo facturar con la tarifa básica?"]),
    }),
    "healthcare": (["¿Qué quiere el paciente?", "¿Qué tipo de solicitud recibe la consulta?"], {
        "book_appt": ("Pedir cita", "¿Quiere el paciente pedir cita?", ["¿Podría ver a la doctora Ruiz la semana que viene?", "Quería cita para las vacunas de mi hijo."]),
        "cancel_appt": ("Anular una cita", "¿Está anulando una cita?", ["Mañana no puedo ir a la cita de las tres, anuládmela, por favor.", "Ya no necesito la revisión del lunes, podéis quitarla."]),
        "reschedule": ("Cambiar una cita de fecha u hora", "¿Quiere cambiar la cita a otro momento?", ["¿Puedo pasar la cita del martes al viernes?", "¿Se podría retrasar mi revisión a última hora de la tarde?"]),
        "prescription": ("Receta nueva o renovada", "¿Pide una receta?", ["Se me acaban las pastillas de la tensión, ¿me podéis renovar la receta?", "Necesito más medicación para el tiroides antes de irme de viaje."]),
    }),
}
INTENT["pt"] = {
    "banking": (["Que operação bancária o cliente quer?", "Classifique esta mensagem enviada ao chat do banco."], {
        "card_lost": ("Avisar de cartão perdido ou roubado", "O cliente está avisando que perdeu o cartão?", ["Acho que esqueci o cartão no táxi ontem, bloqueiem, por favor.", "Roubaram minha carteira com o cartão de crédito dentro."]),
        "transfer": ("Mandar dinheiro para outra conta", "O usuário quer mandar dinheiro para alguém?", ["Preciso fazer um Pix de 300 reais para o meu senhorio hoje.", "Passe 500 reais da conta corrente para a poupança."]),
        "balance": ("Consultar o saldo", "O cliente quer saber o saldo?", ["Quanto ainda tenho na conta?", "Qual é o saldo da minha poupança agora?"]),
        "dispute": ("Contestar uma cobrança desconhecida", "Ele está contestando uma cobrança?", ["Tem uma compra de 60 reais de uma loja onde nunca estive.", "Essa compra no cartão em Recife não fui eu que fiz."]),
        "loan": ("Informações sobre empréstimo", "Ele tem interesse em um empréstimo?", ["Qual seria a taxa de juros de um financiamento de carro?", "Consigo pegar uns 20 mil para reformar a cozinha?"]),
    }),
    "shopping": (["O que o cliente da loja quer?", "Qual solicitação de compra é esta?"], {
        "track": ("Saber onde está o pedido", "O cliente pergunta onde está o pedido?", ["Cadê meu pedido? Era para ter chegado ontem.", "Alguma novidade sobre a entrega da minha cafeteira?"]),
        "return_item": ("Devolver um produto", "O cliente quer devolver algo?", ["A jaqueta ficou apertada, como faço para devolver?", "Quero devolver o abajur, não combinou com a sala."]),
        "stock": ("Saber se há estoque", "Pergunta se o produto está disponível?", ["Vocês têm o sofá azul de três lugares?", "Quando volta o tamanho 42 dessa bota?"]),
        "discount": ("Perguntar sobre promoções ou cupons", "Pergunta sobre desconto?", ["Tem desconto para estudante nos notebooks?", "Meu cupom diz que é inválido, a promoção acabou?"]),
    }),
    "hr": (["Que pedido o funcionário faz ao RH?", "Classifique esta mensagem para o RH."], {
        "leave": ("Férias ou folga", "O funcionário está pedindo folga?", ["Queria tirar férias na semana de 12 de agosto.", "Posso folgar na quinta e na sexta que vêm?"]),
        "payslip": ("Salário ou holerite", "É sobre salário ou holerite?", ["Meu holerite não veio com as horas extras do mês passado.", "Quando o aumento vai aparecer no salário?"]),
        "sick": ("Avisar de doença ou ausência", "O funcionário avisa que está doente?", ["Estou com febre e não vou conseguir ir hoje.", "O médico me deu uma semana de atestado por causa da coluna."]),
        "resignation": ("Pedido de demissão", "O funcionário está pedindo demissão?", ["Considerem esta mensagem meu pedido de demissão; meu último dia será 30 de junho.", "Aceitei outra proposta e gostaria de combinar meu aviso prévio."]),
    }),
}
INTENT["fr"] = {
    "banking": (["Quelle opération bancaire le client demande-t-il ?", "Classez ce message envoyé au chat de la banque."], {
        "card_lost": ("Signaler une carte perdue ou volée", "Le client signale-t-il la perte de sa carte ?", ["Je crois avoir oublié ma carte dans un taxi hier soir, bloquez-la s'il vous plaît.", "On m'a volé mon portefeuille avec ma carte bancaire."]),
        "transfer": ("Envoyer de l'argent sur un autre compte", "L'utilisateur veut-il envoyer de l'argent à quelqu'un ?", ["Je dois virer 400 € à mon propriétaire aujourd'hui.", "Transférez 500 € du compte courant vers mon livret."]),
        "balance": ("Consulter le solde", "Le client demande-t-il son solde ?", ["Combien me reste-t-il sur mon compte ?", "Quel est le solde de mon livret en ce moment ?"]),
        "dispute": ("Contester une opération inconnue", "Conteste-t-il une opération ?", ["Il y a un débit de 70 € d'une boutique où je ne suis jamais allé.", "Ce paiement par carte à Nantes, ce n'est pas moi."]),
        "loan": ("Se renseigner sur un crédit", "S'intéresse-t-il à un prêt ?", ["Quel taux pour un crédit auto ?", "Pourrais-je emprunter 15 000 € pour refaire la cuisine ?"]),
    }),
    "travel": (["De quoi le voyageur a-t-il besoin ?", "Classez cette demande adressée à l'agence."], {
        "book": ("Faire une nouvelle réservation", "Veut-il réserver quelque chose de nouveau ?", ["Deux places pour Vienne le 14, retour le 20, s'il vous plaît.", "Trouvez-moi un hôtel près du palais des congrès pour trois nuits."]),
        "cancel": ("Annuler une réservation", "Veut-il annuler une réservation ?", ["Annulez mon hôtel à Rome, je ne peux plus partir.", "Je dois annuler le vol retour de ma réservation."]),
        "change": ("Modifier une réservation", "Veut-il modifier une réservation existante ?", ["Puis-je décaler mon vol du vendredi au dimanche ?", "Il faut ajouter ma fille à la réservation d'hôtel."]),
        "baggage": ("Bagages", "Est-ce au sujet des bagages ?", ["Ma valise n'est jamais arrivée sur le tapis à Madrid.", "Combien de kilos puis-je mettre en soute avec un billet économique ?"]),
    }),
    "it_helpdesk": (["De quel type de ticket informatique s'agit-il ?", "Dans quelle file du support informatique le mettre ?"], {
        "password": ("Mot de passe ou connexion", "Est-ce un problème d'accès à un compte ?", ["J'ai encore oublié mon mot de passe Windows.", "Mon mot de passe a expiré et la page de réinitialisation ne charge pas."]),
        "hardware": ("Matériel cassé ou manquant", "Un équipement est-il en panne ou nécessaire ?", ["L'écran de mon portable est fissuré depuis sa chute.", "Pourrais-je avoir un deuxième écran ?"]),
        "network": ("Internet, wifi ou VPN", "Est-ce un problème de connexion réseau ?", ["Le VPN se coupe toutes les dix minutes en télétravail.", "Le wifi de la salle B est d'une lenteur terrible."]),
        "phishing_report": ("Signaler un message suspect", "L'utilisateur signale-t-il un e-mail suspect ?", ["J'ai reçu un mail du « PDG » qui me demande d'acheter des cartes cadeaux. Ça sent l'arnaque.", "Ce message dit que ma boîte est pleine et demande mon mot de passe, c'est normal ?"]),
    }),
}
INTENT["de"] = {
    "banking": (["Welches Bankanliegen hat der Kunde?", "Ordnen Sie diese Nachricht an den Bank-Chat ein."], {
        "card_lost": ("Verlorene oder gestohlene Karte melden", "Meldet der Kunde eine verlorene Karte?", ["Ich glaube, ich habe meine Karte gestern im Taxi liegen lassen, bitte sperren.", "Mir wurde die Geldbörse samt Kreditkarte gestohlen."]),
        "transfer": ("Geld auf ein anderes Konto überweisen", "Will die Person jemandem Geld schicken?", ["Ich muss heute noch 400 Euro an meinen Vermieter überweisen.", "Bitte 500 Euro vom Girokonto aufs Tagesgeld umbuchen."]),
        "balance": ("Kontostand abfragen", "Fragt der Kunde nach seinem Kontostand?", ["Wie viel ist noch auf meinem Girokonto?", "Wie hoch ist mein Tagesgeld gerade?"]),
        "dispute": ("Unbekannte Abbuchung beanstanden", "Beanstandet er eine Zahlung?", ["Da ist eine Abbuchung über 70 Euro von einem Laden, in dem ich nie war.", "Diese Kartenzahlung in Wien war nicht ich."]),
        "loan": ("Nach einem Kredit fragen", "Interessiert er sich für einen Kredit?", ["Welchen Zinssatz bekäme ich für einen Autokredit?", "Könnte ich 15.000 Euro für eine neue Küche aufnehmen?"]),
    }),
    "hr": (["Welches Anliegen hat der Mitarbeiter an die Personalabteilung?", "Ordnen Sie diese Nachricht an HR ein."], {
        "leave": ("Urlaub oder freie Tage", "Beantragt die Person Urlaub?", ["Ich würde gern die Woche ab dem 12. August Urlaub nehmen.", "Kann ich nächsten Donnerstag und Freitag freinehmen?"]),
        "payslip": ("Gehalt oder Lohnabrechnung", "Geht es um Gehalt oder Abrechnung?", ["In meiner Abrechnung fehlen die Überstunden vom letzten Monat.", "Ab wann steht die Gehaltserhöhung auf dem Zettel?"]),
        "sick": ("Krankmeldung", "Meldet sich die Person krank?", ["Ich habe Fieber und komme heute nicht.", "Mein Arzt hat mich wegen des Rückens eine Woche krankgeschrieben."]),
        "resignation": ("Kündigung durch den Mitarbeiter", "Kündigt die Person?", ["Hiermit kündige ich fristgerecht zum 30. Juni.", "Ich habe eine andere Stelle angenommen und möchte über meine Kündigungsfrist sprechen."]),
    }),
    "it_helpdesk": (["Was für ein IT-Ticket ist das?", "In welche Helpdesk-Kategorie gehört das?"], {
        "password": ("Passwort oder Anmeldung", "Geht es um den Zugang zu einem Konto?", ["Ich habe schon wieder mein Windows-Passwort vergessen.", "Mein Passwort ist abgelaufen und die Reset-Seite lädt nicht."]),
        "hardware": ("Defekte oder fehlende Geräte", "Ist ein Gerät kaputt oder wird eins gebraucht?", ["Das Display meines Laptops hat nach einem Sturz einen Riss.", "Könnte ich einen zweiten Monitor bekommen?"]),
        "network": ("Internet, WLAN oder VPN", "Ist das ein Verbindungsproblem?", ["Das VPN bricht im Homeoffice alle zehn Minuten ab.", "Im Besprechungsraum B ist das WLAN quälend langsam."]),
        "phishing_report": ("Verdächtige Nachricht melden", "Meldet jemand eine verdächtige Mail?", ["Ich habe eine Mail vom 'Chef' bekommen, ich soll Gutscheinkarten kaufen. Sieht gefälscht aus.", "Die Nachricht behauptet, mein Postfach sei voll, und will mein Passwort. Ist das echt?"]),
    }),
}
INTENT_MOD.update({
    "es": dict(pre=["Hola,", "Buenas,", "Una pregunta:"], post=["¡Gracias!", "Un saludo."], other="El mensaje trata de otra cosa"),
    "pt": dict(pre=["Olá,", "Oi,", "Uma dúvida:"], post=["Obrigado!", "Valeu."], other="A mensagem é sobre outro assunto"),
    "fr": dict(pre=["Bonjour,", "Salut,", "Petite question :"], post=["Merci !", "Bonne journée."], other="Le message porte sur autre chose"),
    "de": dict(pre=["Hallo,", "Guten Tag,", "Kurze Frage:"], post=["Danke!", "Viele Grüße."], other="Die Nachricht betrifft etwas anderes"),
})


def intent_builder(lang):
    D = INTENT[lang]
    M = INTENT_MOD[lang]
    subs = sorted(D)

    def build(rng):
        sub = pick(rng, subs)
        intents = D[sub][1]
        it = pick(rng, sorted(intents))
        text = pick(rng, intents[it][2])
        body = join(text, pick(rng, M["post"]) if rng.random() < 0.25 else "")
        return (pick(rng, M["pre"]) + "\n" + body) if rng.random() < 0.3 else body, dict(sub=sub, intent=it)
    return build


def intent_questions(lang):
    D = INTENT[lang]
    M = INTENT_MOD[lang]

    def choice(attrs, rng):
        phr, intents = D[attrs["sub"]]
        pool = {k: [v[0]] for k, v in intents.items()}
        return choice_q("intent", phr, pool, null_rate=0.08)(attrs, rng)

    def noul(attrs, rng):
        intents = D[attrs["sub"]][1]
        per = {k: ([v[1]], [(v[0], M["other"])]) for k, v in intents.items()}
        return noul_cat("intent", per)(attrs, rng)
    return [(3, choice), (2, noul)]


for _lg, _n in (("en", 780), ("es", 85), ("pt", 85), ("fr", 85), ("de", 85)):
    register("intent", _lg, _n, intent_builder(_lg), intent_questions(_lg), max_uses=3)

# ======================================================================================
# FACTS: yes/no and choice questions about what a text states (or does not state)
# ======================================================================================
FACT_SLOTS = {
    "en": dict(names=["Nadia", "Owen", "Ravi", "Greta", "Luis", "Hannah", "Kofi", "Mei"], days=["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
               cities=["Bristol", "Leeds", "Cork", "Glasgow", "York", "Cardiff", "Brighton"], months=["March", "April", "May", "June", "September", "October"]),
    "es": dict(names=["Nuria", "Óscar", "Paula", "Iván", "Rocío", "Hugo"], days=["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
               cities=["Valencia", "Bilbao", "Málaga", "Zaragoza", "Granada", "Vigo"], months=["marzo", "abril", "mayo", "junio", "octubre"]),
    "pt": dict(names=["Larissa", "Thiago", "Camila", "Diego", "Renata", "Vítor"], days=["segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo"],
               cities=["Curitiba", "Recife", "Porto Alegre", "Belém", "Fortaleza", "Braga"], months=["março", "abril", "maio", "junho", "outubro"]),
    "fr": dict(names=["Camille", "Bastien", "Inès", "Mathis", "Sarah", "Hugo"], days=["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
               cities=["Lille", "Rennes", "Grenoble", "Dijon", "Nancy", "Tours"], months=["mars", "avril", "mai", "juin", "octobre"]),
    "de": dict(names=["Jonas", "Mira", "Felix", "Leonie", "Timo", "Anja"], days=["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"],
               cities=["Leipzig", "Bremen", "Freiburg", "Kassel", "Mainz", "Graz"], months=["März", "April", "Mai", "Juni", "Oktober"]),
}


def two(rng, xs):
    a, b = rng.sample(xs, 2)
    return a, b


def day_options(rng, days, gold, extra):
    others = [d for d in days if d != gold and d not in extra]
    opts = [gold] + list(extra) + rng.sample(others, rng.randint(1, 2))
    return opts


def fact_key(s):
    import unicodedata
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()
    return "_".join("".join(ch if ch.isalnum() else " " for ch in s).split())


def en_facts(rng, S):
    t = rng.randrange(12)
    name, name2 = two(rng, S["names"])
    d1, d2 = two(rng, S["days"])
    c1, c2 = two(rng, S["cities"])
    m1, m2 = two(rng, S["months"])
    qs = []
    if t == 0:
        team = pick(rng, ["design", "budget", "onboarding", "sprint review", "client"])
        same = rng.random() < 0.5
        text = "Heads up from %s: the %s session moves from %s to %s%s. Room %d as usual." % (name, team, d1, d2, ", same time" if same else ", and it will start an hour later", rng.randint(2, 9) * 100 + rng.randint(1, 20))
        qs = [("noul", "Will the session now take place on %s?" % d2, True), ("noul", "Is the session still on %s?" % d1, False),
              ("noul", "Does the start time change?", not same), ("noul", "Is a room number given?", True)]
        opts = day_options(rng, S["days"], d2, [d1])
        qs.append(("choice", "On which day is the session held now?", {fact_key(d): "" for d in opts}, fact_key(d2)))
    elif t == 1:
        ev = pick(rng, ["quiz night", "team lunch", "book club", "charity run", "school play"])
        reason, ill = pick(rng, [("a bad cold", True), ("a work trip", False), ("a family wedding", False), ("the flu", True), ("a dentist appointment", False)])
        if rng.random() < 0.5:
            text = "Sorry everyone, %s can't make the %s on %s because of %s." % (name, ev, d1, reason)
            att = False
        else:
            text = "Good news: %s will make it to the %s on %s after all." % (name, ev, d1)
            att = True
        qs = [("noul", "Is %s going to the %s?" % (name, ev), att), ("noul", "Does the message say %s is unwell?" % name, ill if not att else False) if not att else ("noul", "Is the %s on %s?" % (ev, d2), False),
              ("noul", "Is the %s on %s?" % (ev, d1), True), ("noul", "Does %s organise the %s?" % (name2, ev), False)]
    elif t == 2:
        item = pick(rng, ["road bike", "sofa bed", "sewing machine", "pram", "bookcase", "gaming monitor"])
        cond, new = pick(rng, [("barely used, still in the box", True), ("a few scratches but works fine", False), ("brand new, unwanted gift", True), ("well loved, some wear on the corners", False)])
        priced = rng.random() < 0.6
        deliver = rng.random() < 0.4
        text = "For sale: %s, %s. %s %s, %s." % (item, cond, ("Asking %d pounds." % rng.choice([40, 65, 90, 120, 150])) if priced else "Open to offers.",
                                                 "Collection from " + c1 if not deliver else "Based in " + c1, "can deliver within 10 miles" if deliver else "no delivery")
        qs = [("noul", "Does the ad state a price?", priced), ("noul", "Will the seller bring the item to the buyer?", deliver),
              ("noul", "Is the item described as new or unused?", new), ("noul", "Is the seller located in %s?" % c1, True), ("noul", "Is the seller located in %s?" % c2, False)]
    elif t == 3:
        n = rng.randint(1, 5)
        bfx = pick(rng, ["is included", "is not included", "costs extra"])
        text = "%s booked us into a guesthouse in %s for %d night%s, arriving %s. Breakfast %s." % (name, c1, n, "s" if n > 1 else "", d1, bfx)
        bf = bfx == "is included"
        qs = [("score", "How long is the stay?", ["1 night", "2 nights", "3 nights", "4 nights or more"], min(n, 4) - 1),
              ("noul", "Is breakfast part of the booking?", bf), ("noul", "Is the guesthouse in %s?" % c2, False), ("noul", "Does the text say who made the booking?", True)]
    elif t == 4:
        kind = rng.randrange(3)
        contact = ["on 07700 %06d" % rng.randint(0, 999999), "at %s.%s@example.org" % (name.lower(), "office"), "through the reception desk on the ground floor"][kind]
        text = "If anything comes up while I'm away, %s is covering for me and can be reached %s." % (name2, contact)
        qs = [("noul", "Is a phone number included?", kind == 0), ("noul", "Is an email address included?", kind == 1),
              ("noul", "Is %s the person covering?" % name2, True), ("noul", "Is %s the person covering?" % name, False)]
    elif t == 5:
        amt = rng.choice([12.5, 34, 58.9, 120, 19.99])
        done = rng.random() < 0.5
        text = ("We've processed your refund of %s EUR; it left our account today and should reach your card within 5 working days." if done else
                "Your return has arrived at our warehouse. Once it has been inspected, we will send a refund of %s EUR to your card.") % amt
        qs = [("noul", "Has the money already been sent back?", done), ("noul", "Is the refund amount given?", True),
              ("noul", "Is the customer told to return the item again?", False), ("noul", "Is the money going to a bank card?", True)]
    elif t == 6:
        year = rng.randint(2009, 2021)
        fuel = pick(rng, ["petrol", "diesel", "hybrid"])
        owners = rng.choice([1, 2, 3])
        serv = rng.random() < 0.5
        text = "%d hatchback, %s, %s km, %s. %s" % (year, fuel, "{:,}".format(rng.randint(20, 180) * 1000), "one owner from new" if owners == 1 else "%d previous owners" % owners,
                                                  "Full service history." if serv else "No service book, sold as seen.")
        qs = [("noul", "Is the car a diesel?", fuel == "diesel"), ("noul", "Has the car had only one owner?", owners == 1),
              ("noul", "Does the ad mention a service history?", serv), ("noul", "Is the colour of the car given?", False)]
        qs.append(("choice", "What fuel does the car use?", {"petrol": "Petrol", "diesel": "Diesel", "hybrid": "Hybrid", "electric": "Fully electric"}, fuel))
    elif t == 7:
        st = rng.randrange(3)
        plat = rng.randint(1, 12)
        text = ["The 08:15 service to %s is running on time and will depart from platform %d." % (c1, plat),
                "The 08:15 service to %s is delayed by about %d minutes; it will leave from platform %d." % (c1, rng.choice([10, 25, 40]), plat),
                "The 08:15 service to %s has been cancelled. A replacement bus leaves from the station forecourt." % c1][st]
        qs = [("noul", "Has the train been cancelled?", st == 2), ("noul", "Will the train leave late?", st == 1),
              ("noul", "Is a platform number given?", st != 2), ("noul", "Is the train going to %s?" % c2, False)]
        qs.append(("choice", "What is the status of the 08:15?", {"on_time": "Departing as planned", "delayed": "Running late", "cancelled": "Not running", "diverted": "Taking another route"}, ["on_time", "delayed", "cancelled"][st]))
    elif t == 8:
        pet = pick(rng, ["Milo", "Pepper", "Luna", "Biscuit", "Ziggy"])
        sy = rng.sample([("vomiting", "vomiting"), ("limping on the back left leg", "limping"), ("sneezing a lot", "sneezing"), ("scratching his ears", "scratching")], 2)
        eats = rng.random() < 0.5
        text = "Our dog %s has been %s and %s since %s. He is %s." % (pet, sy[0][0], sy[1][0], d1, "still eating normally" if eats else "refusing his food")
        all_sy = ["vomiting", "limping", "sneezing", "scratching", "coughing"]
        q_sy = pick(rng, all_sy)
        present = q_sy in (sy[0][1], sy[1][1])
        qs = [("noul", "Is the dog eating normally?", eats), ("noul", "Is %s mentioned as a symptom?" % q_sy, present),
              ("noul", "Did the symptoms start on %s?" % d1, True), ("noul", "Did the symptoms start on %s?" % d2, False), ("noul", "Is the dog's age given?", False)]
    elif t == 9:
        a, b, c = rng.sample(S["names"], 3)
        dishes = rng.sample(["a salad", "dessert", "the drinks", "bread", "a vegetarian lasagne"], 2)
        text = "Picnic plan for %s: %s is bringing %s, %s will take care of %s, and %s can't come this time." % (d1, a, dishes[0], b, dishes[1], c)
        opts = {fact_key(x): "" for x in [a, b, c]}
        qs = [("choice", "Who is in charge of %s?" % dishes[1], opts, fact_key(b)), ("choice", "Who is bringing %s?" % dishes[0], opts, fact_key(a)),
              ("noul", "Is %s coming to the picnic?" % c, False), ("noul", "Is the picnic on %s?" % d2, False), ("noul", "Does the plan say where the picnic is?", False)]
    elif t == 10:
        closed_day = d1
        text = "The %s pool will be closed on %s for maintenance. Lane swimming resumes on %s from 7 am." % (c1, closed_day, d2)
        qs = [("noul", "Can people swim at the pool on %s?" % closed_day, False), ("noul", "Does lane swimming restart on %s?" % d2, True),
              ("noul", "Is a reason given for the closure?", True), ("noul", "Does the notice give an evening closing time?", False)]
    else:
        lang_now, lang_old = two(rng, ["Italian", "Korean", "Portuguese", "Greek", "Dutch", "Arabic"])
        text = "%s gave up on %s last year and is now taking evening classes in %s twice a week." % (name, lang_old, lang_now)
        opts = {fact_key(x): "" for x in [lang_now, lang_old] + rng.sample([l for l in ["Turkish", "Polish", "Hindi", "Swedish"]], 1)}
        qs = [("choice", "Which language is %s studying at the moment?" % name, opts, fact_key(lang_now)), ("noul", "Is %s still learning %s?" % (name, lang_old), False),
              ("noul", "Are the classes in the evening?", True), ("noul", "Does the text say how much the classes cost?", False)]
    return text, qs


def es_facts(rng, S):
    t = rng.randrange(6)
    name, name2 = two(rng, S["names"])
    d1, d2 = two(rng, S["days"])
    c1, c2 = two(rng, S["cities"])
    if t == 0:
        same = rng.random() < 0.5
        text = "Aviso de %s: la reunión de presupuesto pasa del %s al %s%s. Sala %d, como siempre." % (name, d1, d2, ", a la misma hora" if same else ", y empezará una hora más tarde", rng.randint(2, 9) * 10)
        qs = [("noul", "¿Será ahora la reunión el %s?" % d2, True), ("noul", "¿Sigue la reunión el %s?" % d1, False), ("noul", "¿Cambia la hora de inicio?", not same), ("noul", "¿Se indica el número de sala?", True)]
        opts = day_options(rng, S["days"], d2, [d1])
        qs.append(("choice", "¿Qué día es ahora la reunión?", {fact_key(d): "" for d in opts}, fact_key(d2)))
    elif t == 1:
        att = rng.random() < 0.5
        text = ("Lo siento, %s no podrá venir a la cena del %s porque tiene gripe." if not att else "Al final %s sí vendrá a la cena del %s, aunque llegará tarde.") % (name, d1)
        qs = [("noul", "¿Irá %s a la cena?" % name, att), ("noul", "¿Es la cena el %s?" % d1, True), ("noul", "¿Es la cena el %s?" % d2, False), ("noul", "¿Dice el mensaje dónde es la cena?", False)]
    elif t == 2:
        priced = rng.random() < 0.6
        deliver = rng.random() < 0.4
        item = pick(rng, ["una bicicleta de paseo", "un sofá cama", "una cuna", "una estantería"])
        text = "Vendo %s en buen estado. %s %s." % (item, "Pido %d euros." % rng.choice([40, 70, 120]) if priced else "Acepto ofertas.", ("Estoy en %s y puedo llevarla a domicilio" if deliver else "Hay que recogerla en %s") % c1)
        qs = [("noul", "¿Indica el anuncio un precio?", priced), ("noul", "¿Ofrece el vendedor llevarlo a casa del comprador?", deliver), ("noul", "¿Está el vendedor en %s?" % c1, True), ("noul", "¿Está el vendedor en %s?" % c2, False)]
    elif t == 3:
        n = rng.randint(1, 5)
        bf = rng.random() < 0.5
        text = "%s nos ha reservado %d noche%s en una casa rural cerca de %s; llegamos el %s. El desayuno %s." % (name, n, "s" if n > 1 else "", c1, d1, "está incluido" if bf else "no está incluido")
        qs = [("score", "¿Cuánto dura la estancia?", ["1 noche", "2 noches", "3 noches", "4 noches o más"], min(n, 4) - 1), ("noul", "¿Entra el desayuno en la reserva?", bf),
              ("noul", "¿Se dice quién hizo la reserva?", True)]
    elif t == 4:
        st = rng.randrange(3)
        text = ["El tren de las 8:15 a %s sale puntual por la vía %d." % (c1, rng.randint(1, 9)), "El tren de las 8:15 a %s lleva unos %d minutos de retraso." % (c1, rng.choice([10, 20, 35])),
                "El tren de las 8:15 a %s ha sido cancelado; hay un autobús alternativo frente a la estación." % c1][st]
        qs = [("noul", "¿Se ha cancelado el tren?", st == 2), ("noul", "¿Saldrá el tren con retraso?", st == 1), ("noul", "¿Va el tren a %s?" % c2, False),
              ("choice", "¿En qué situación está el tren de las 8:15?", {"on_time": "Sale a su hora", "delayed": "Va con retraso", "cancelled": "No circula"}, ["on_time", "delayed", "cancelled"][st])]
    else:
        a, b, c = rng.sample(S["names"], 3)
        text = "Para la excursión del %s: %s trae la tortilla, %s se encarga de las bebidas y %s esta vez no puede venir." % (d1, a, b, c)
        opts = {fact_key(x): "" for x in [a, b, c]}
        qs = [("choice", "¿Quién se encarga de las bebidas?", opts, fact_key(b)), ("noul", "¿Viene %s a la excursión?" % c, False), ("noul", "¿Se dice adónde es la excursión?", False)]
    return text, qs


def pt_facts(rng, S):
    t = rng.randrange(6)
    name, name2 = two(rng, S["names"])
    d1, d2 = two(rng, S["days"])
    c1, c2 = two(rng, S["cities"])
    if t == 0:
        same = rng.random() < 0.5
        text = "Recado de %s: a reunião de orçamento mudou de %s para %s%s. Sala %d, como sempre." % (name, d1, d2, ", no mesmo horário" if same else " e vai começar uma hora mais tarde", rng.randint(2, 9) * 10)
        qs = [("noul", "A reunião agora vai ser na %s?" % d2 if "feira" in d2 else "A reunião agora vai ser no %s?" % d2, True), ("noul", "A reunião continua marcada para %s?" % d1, False),
              ("noul", "O horário de início muda?", not same), ("noul", "O número da sala é informado?", True)]
        opts = day_options(rng, S["days"], d2, [d1])
        qs.append(("choice", "Em que dia é a reunião agora?", {fact_key(d): "" for d in opts}, fact_key(d2)))
    elif t == 1:
        att = rng.random() < 0.5
        text = ("Infelizmente %s não vai poder ir ao churrasco de %s por causa de uma gripe." if not att else "No fim das contas %s vai ao churrasco de %s, mas vai chegar atrasado.") % (name, d1)
        qs = [("noul", "%s vai ao churrasco?" % name, att), ("noul", "O churrasco é em %s?" % d1, True), ("noul", "O churrasco é em %s?" % d2, False), ("noul", "A mensagem diz onde vai ser o churrasco?", False)]
    elif t == 2:
        priced = rng.random() < 0.6
        deliver = rng.random() < 0.4
        item = pick(rng, ["uma bicicleta", "um sofá-cama", "um berço", "uma estante"])
        text = "Vendo %s em bom estado. %s %s." % (item, "Peço %d reais." % rng.choice([150, 300, 450]) if priced else "Aceito propostas.", ("Estou em %s e posso entregar" if deliver else "Retirada em %s") % c1)
        qs = [("noul", "O anúncio informa um preço?", priced), ("noul", "O vendedor se oferece para entregar?", deliver), ("noul", "O vendedor está em %s?" % c1, True), ("noul", "O vendedor está em %s?" % c2, False)]
    elif t == 3:
        n = rng.randint(1, 5)
        bf = rng.random() < 0.5
        text = "%s reservou %d diária%s numa pousada perto de %s; chegamos %s. O café da manhã %s." % (name, n, "s" if n > 1 else "", c1, "no " + d1 if "feira" not in d1 else "na " + d1, "está incluído" if bf else "não está incluído")
        qs = [("score", "Quanto tempo dura a hospedagem?", ["1 diária", "2 diárias", "3 diárias", "4 diárias ou mais"], min(n, 4) - 1), ("noul", "O café da manhã está incluído na reserva?", bf),
              ("noul", "O texto diz quem fez a reserva?", True)]
    elif t == 4:
        st = rng.randrange(3)
        text = ["O voo das 8h15 para %s está no horário e embarca no portão %d." % (c1, rng.randint(1, 30)), "O voo das 8h15 para %s está atrasado cerca de %d minutos." % (c1, rng.choice([15, 30, 50])),
                "O voo das 8h15 para %s foi cancelado; procure o balcão da companhia para remarcar." % c1][st]
        qs = [("noul", "O voo foi cancelado?", st == 2), ("noul", "O voo vai sair atrasado?", st == 1), ("noul", "O voo vai para %s?" % c2, False),
              ("choice", "Qual é a situação do voo das 8h15?", {"on_time": "No horário", "delayed": "Atrasado", "cancelled": "Cancelado"}, ["on_time", "delayed", "cancelled"][st])]
    else:
        a, b, c = rng.sample(S["names"], 3)
        text = "Para o piquenique: %s leva os sanduíches, %s fica com as bebidas e %s desta vez não pode ir." % (a, b, c)
        opts = {fact_key(x): "" for x in [a, b, c]}
        qs = [("choice", "Quem vai cuidar das bebidas?", opts, fact_key(b)), ("noul", "%s vai ao piquenique?" % c, False), ("noul", "O texto diz onde vai ser o piquenique?", False)]
    return text, qs


def fr_facts(rng, S):
    t = rng.randrange(6)
    name, name2 = two(rng, S["names"])
    d1, d2 = two(rng, S["days"])
    c1, c2 = two(rng, S["cities"])
    if t == 0:
        same = rng.random() < 0.5
        text = "Message de %s : la réunion budget passe du %s au %s%s. Salle %d, comme d'habitude." % (name, d1, d2, ", même heure" if same else ", et commencera une heure plus tard", rng.randint(2, 9) * 10)
        qs = [("noul", "La réunion aura-t-elle lieu le %s ?" % d2, True), ("noul", "La réunion est-elle toujours prévue le %s ?" % d1, False), ("noul", "L'heure de début change-t-elle ?", not same), ("noul", "Le numéro de salle est-il indiqué ?", True)]
        opts = day_options(rng, S["days"], d2, [d1])
        qs.append(("choice", "Quel jour se tient désormais la réunion ?", {fact_key(d): "" for d in opts}, fact_key(d2)))
    elif t == 1:
        att = rng.random() < 0.5
        text = ("Désolé, %s ne pourra pas venir au dîner de %s à cause d'une grippe." if not att else "Finalement, %s viendra bien au dîner de %s, mais en retard.") % (name, d1)
        qs = [("noul", "Est-ce que %s viendra au dîner ?" % name, att), ("noul", "Le dîner a-t-il lieu %s ?" % d1, True), ("noul", "Le dîner a-t-il lieu %s ?" % d2, False), ("noul", "Le message précise-t-il le lieu du dîner ?", False)]
    elif t == 2:
        priced = rng.random() < 0.6
        deliver = rng.random() < 0.4
        item = pick(rng, ["un vélo de ville", "un canapé convertible", "un lit parapluie", "une bibliothèque"])
        text = "Je vends %s en bon état. %s %s." % (item, "Prix : %d €." % rng.choice([40, 80, 130]) if priced else "Faites-moi une offre.", ("Je suis à %s et je peux livrer" if deliver else "À venir chercher à %s") % c1)
        qs = [("noul", "L'annonce indique-t-elle un prix ?", priced), ("noul", "Le vendeur propose-t-il de livrer ?", deliver), ("noul", "Le vendeur est-il à %s ?" % c1, True), ("noul", "Le vendeur est-il à %s ?" % c2, False)]
    elif t == 3:
        n = rng.randint(1, 5)
        bf = rng.random() < 0.5
        text = "%s nous a réservé %d nuit%s dans un gîte près de %s ; arrivée %s. Le petit-déjeuner %s." % (name, n, "s" if n > 1 else "", c1, d1, "est compris" if bf else "n'est pas compris")
        qs = [("score", "Combien de temps dure le séjour ?", ["1 nuit", "2 nuits", "3 nuits", "4 nuits ou plus"], min(n, 4) - 1), ("noul", "Le petit-déjeuner est-il inclus dans la réservation ?", bf),
              ("noul", "Le texte dit-il qui a fait la réservation ?", True)]
    elif t == 4:
        st = rng.randrange(3)
        text = ["Le TER de 8 h 15 pour %s est à l'heure, départ voie %d." % (c1, rng.randint(1, 9)), "Le TER de 8 h 15 pour %s a environ %d minutes de retard." % (c1, rng.choice([10, 20, 35])),
                "Le TER de 8 h 15 pour %s est supprimé ; un car de substitution part devant la gare." % c1][st]
        qs = [("noul", "Le train est-il supprimé ?", st == 2), ("noul", "Le train partira-t-il en retard ?", st == 1), ("noul", "Le train va-t-il à %s ?" % c2, False),
              ("choice", "Quelle est la situation du TER de 8 h 15 ?", {"on_time": "Part à l'heure", "delayed": "En retard", "cancelled": "Ne circule pas"}, ["on_time", "delayed", "cancelled"][st])]
    else:
        a, b, c = rng.sample(S["names"], 3)
        text = "Pour le pique-nique de %s : %s apporte la quiche, %s s'occupe des boissons et %s ne peut pas venir cette fois." % (d1, a, b, c)
        opts = {fact_key(x): "" for x in [a, b, c]}
        qs = [("choice", "Qui s'occupe des boissons ?", opts, fact_key(b)), ("noul", "Est-ce que %s vient au pique-nique ?" % c, False), ("noul", "Le message dit-il où a lieu le pique-nique ?", False)]
    return text, qs


def de_facts(rng, S):
    t = rng.randrange(6)
    name, name2 = two(rng, S["names"])
    d1, d2 = two(rng, S["days"])
    c1, c2 = two(rng, S["cities"])
    if t == 0:
        same = rng.random() < 0.5
        text = "Info von %s: Das Budgettreffen wird von %s auf %s verlegt%s. Raum %d wie immer." % (name, d1, d2, ", gleiche Uhrzeit" if same else " und beginnt eine Stunde später", rng.randint(2, 9) * 10)
        qs = [("noul", "Findet das Treffen jetzt am %s statt?" % d2, True), ("noul", "Bleibt das Treffen am %s?" % d1, False), ("noul", "Ändert sich die Anfangszeit?", not same), ("noul", "Wird eine Raumnummer genannt?", True)]
        opts = day_options(rng, S["days"], d2, [d1])
        qs.append(("choice", "An welchem Tag ist das Treffen jetzt?", {fact_key(d): "" for d in opts}, fact_key(d2)))
    elif t == 1:
        att = rng.random() < 0.5
        text = ("Leider schafft es %s nicht zum Abendessen am %s, wegen einer Grippe." if not att else "%s kommt nun doch zum Abendessen am %s, allerdings etwas später.") % (name, d1)
        qs = [("noul", "Kommt %s zum Abendessen?" % name, att), ("noul", "Ist das Abendessen am %s?" % d1, True), ("noul", "Ist das Abendessen am %s?" % d2, False), ("noul", "Steht in der Nachricht, wo das Abendessen stattfindet?", False)]
    elif t == 2:
        priced = rng.random() < 0.6
        deliver = rng.random() < 0.4
        item = pick(rng, ["ein Stadtrad", "ein Schlafsofa", "ein Reisebett", "ein Bücherregal"])
        text = "Verkaufe %s in gutem Zustand. %s %s." % (item, "Preis: %d Euro." % rng.choice([40, 80, 130]) if priced else "Preis VB, macht mir ein Angebot.", ("Wohne in %s und liefere gern" if deliver else "Nur Abholung in %s") % c1)
        qs = [("noul", "Nennt die Anzeige einen festen Betrag?", priced), ("noul", "Bietet der Verkäufer eine Lieferung an?", deliver), ("noul", "Ist der Verkäufer in %s?" % c1, True), ("noul", "Ist der Verkäufer in %s?" % c2, False)]
    elif t == 3:
        n = rng.randint(1, 5)
        bf = rng.random() < 0.5
        text = "%s hat uns %d Nacht%s in einer Pension bei %s gebucht; Anreise am %s. Frühstück ist %s." % (name, n, "e" if n > 1 else "", c1, d1, "inklusive" if bf else "nicht inklusive")
        qs = [("score", "Wie lange dauert der Aufenthalt?", ["1 Nacht", "2 Nächte", "3 Nächte", "4 Nächte oder mehr"], min(n, 4) - 1), ("noul", "Ist das Frühstück in der Buchung enthalten?", bf),
              ("noul", "Steht im Text, wer gebucht hat?", True)]
    elif t == 4:
        st = rng.randrange(3)
        text = ["Der RE um 8:15 Uhr nach %s fährt pünktlich von Gleis %d." % (c1, rng.randint(1, 9)), "Der RE um 8:15 Uhr nach %s hat etwa %d Minuten Verspätung." % (c1, rng.choice([10, 20, 35])),
                "Der RE um 8:15 Uhr nach %s fällt aus; Ersatzbusse fahren vor dem Bahnhof ab." % c1][st]
        qs = [("noul", "Fällt der Zug aus?", st == 2), ("noul", "Fährt der Zug verspätet ab?", st == 1), ("noul", "Fährt der Zug nach %s?" % c2, False),
              ("choice", "Wie ist der Stand beim RE um 8:15 Uhr?", {"on_time": "Pünktlich", "delayed": "Verspätet", "cancelled": "Fällt aus"}, ["on_time", "delayed", "cancelled"][st])]
    else:
        a, b, c = rng.sample(S["names"], 3)
        text = "Zum Picknick am %s: %s bringt den Kartoffelsalat mit, %s kümmert sich um die Getränke und %s kann diesmal nicht." % (d1, a, b, c)
        opts = {fact_key(x): "" for x in [a, b, c]}
        qs = [("choice", "Wer kümmert sich um die Getränke?", opts, fact_key(b)), ("noul", "Kommt %s zum Picknick?" % c, False), ("noul", "Steht da, wo das Picknick stattfindet?", False)]
    return text, qs


def facts_builder(fn, lang):
    S = FACT_SLOTS[lang]

    def build(rng):
        text, qs = fn(rng, S)
        return text, {"_qs": qs}
    return build


for _lg, _fn, _n in (("en", en_facts, 620), ("es", es_facts, 75), ("pt", pt_facts, 75), ("fr", fr_facts, 75), ("de", de_facts, 75)):
    register("facts", _lg, _n, facts_builder(_fn, _lg), [(1, fixed_qs())], max_uses=2)

# ======================================================================================
# LEAD QUALIFICATION (readiness 0 browsing .. 3 ready to buy now) and DOCUMENT TYPE
# ======================================================================================
LEAD = {}
LEAD["en"] = dict(
    intro=[("I run a dental practice with 12 staff.", True), ("We're a logistics firm of about 200 people.", True), ("I'm a freelance translator.", None),
           ("Our marketing agency has 35 employees across two offices.", True), ("I manage IT for a chain of four hotels.", False), ("I'm writing on behalf of a regional charity.", False), ("", False)],
    core={0: ["Just browsing for now; we have no plans to change tools this year.", "Mostly curious how your product works, nothing planned.", "A colleague mentioned you, so I'm having a look out of interest.",
              "I'm writing a university paper on scheduling software and wondered how yours compares."],
          1: ["We're starting to compare a few options for next year and would like some general information.", "We might replace our current system at some point and are gathering brochures.",
              "Could you send an overview? We're at a very early stage of looking around.", "We're listing possible vendors; a decision is probably months away."],
          2: ["We've shortlisted you and one competitor and plan to decide by the end of the month.", "Our current contract ends in six weeks, so we need a replacement soon. Can we get a quote?",
              "Management has approved the project and we'd like a demo this week to finalise the choice.", "If the trial goes well we intend to sign before the quarter closes."],
          3: ["Please send the contract today; we want to start with 20 seats on Monday.", "We're ready to buy. How do we pay for the annual plan right now?",
              "Decision made: we'll take the Business plan. Where do I sign?", "Go ahead and set up our account, the purchase order is attached."]},
    budget=["Budget is roughly 400 euros a month.", "We've set aside about 10k for this.", "Our spending limit is around 2,000 a year."],
    senders=["Ana (ops lead)", "J. Whitfield", "procurement@ a client"], channels=["email", "web form"],
)
LEAD["es"] = dict(
    intro=[("Tengo una clínica dental con 12 empleados.", True), ("Somos una empresa de transporte de unas 200 personas.", True), ("Escribo en nombre de una fundación.", False), ("", False)],
    core={0: ["Solo estoy curioseando; no pensamos cambiar de herramienta este año.", "Me lo comentó un compañero y estoy echando un vistazo por curiosidad."],
          1: ["Estamos empezando a comparar opciones para el año que viene y queremos información general.", "Quizá cambiemos de sistema más adelante; de momento recopilamos folletos."],
          2: ["Os tenemos en la lista final junto con otro proveedor y decidiremos a finales de mes.", "Nuestro contrato actual vence en seis semanas; ¿nos pasáis un presupuesto?"],
          3: ["Enviadnos hoy el contrato, queremos empezar el lunes con 20 licencias.", "Ya está decidido: nos quedamos con el plan Empresa. ¿Dónde firmo?"]},
    budget=["El presupuesto ronda los 400 euros al mes.", "Tenemos reservados unos 10.000 euros para esto."],
    senders=["Ana", "J. Ortega"], channels=["email", "formulario web"],
)
LEAD["pt"] = dict(
    intro=[("Tenho um consultório odontológico com 12 funcionários.", True), ("Somos uma transportadora com cerca de 200 pessoas.", True), ("Escrevo em nome de uma ONG.", False), ("", False)],
    core={0: ["Só estou dando uma olhada; não pensamos em trocar de ferramenta este ano.", "Um colega comentou sobre vocês e fiquei curioso."],
          1: ["Estamos começando a comparar opções para o ano que vem e queremos informações gerais.", "Talvez a gente troque de sistema mais para frente; por enquanto estamos juntando materiais."],
          2: ["Vocês estão na lista final com mais um fornecedor e vamos decidir até o fim do mês.", "Nosso contrato atual vence em seis semanas; podem mandar um orçamento?"],
          3: ["Mandem o contrato hoje, queremos começar na segunda com 20 licenças.", "Está decidido: vamos ficar com o plano Empresarial. Onde eu assino?"]},
    budget=["O orçamento gira em torno de 2 mil reais por mês.", "Separamos uns 50 mil reais para isso."],
    senders=["Ana", "J. Moura"], channels=["email", "formulário"],
)
LEAD["fr"] = dict(
    intro=[("Je dirige un cabinet dentaire de 12 personnes.", True), ("Nous sommes un transporteur d'environ 200 salariés.", True), ("J'écris au nom d'une association.", False), ("", False)],
    core={0: ["Je regarde simplement par curiosité ; aucun changement d'outil prévu cette année.", "Un collègue m'a parlé de vous, je jette un œil."],
          1: ["Nous commençons à comparer des solutions pour l'an prochain et souhaitons une documentation générale.", "Nous changerons peut-être de système un jour ; pour l'instant nous rassemblons des brochures."],
          2: ["Vous êtes dans notre liste finale avec un autre prestataire ; décision d'ici la fin du mois.", "Notre contrat actuel se termine dans six semaines, pouvez-vous nous faire un devis ?"],
          3: ["Envoyez-nous le contrat aujourd'hui, nous voulons démarrer lundi avec 20 licences.", "C'est décidé, nous prenons l'offre Entreprise. Où dois-je signer ?"]},
    budget=["Le budget est d'environ 400 € par mois.", "Nous avons prévu à peu près 10 000 € pour ce projet."],
    senders=["Anne", "J. Lefèvre"], channels=["email", "formulaire"],
)
LEAD["de"] = dict(
    intro=[("Ich leite eine Zahnarztpraxis mit 12 Mitarbeitenden.", True), ("Wir sind eine Spedition mit rund 200 Beschäftigten.", True), ("Ich schreibe im Auftrag eines Vereins.", False), ("", False)],
    core={0: ["Ich schaue mich nur aus Neugier um; ein Wechsel ist dieses Jahr nicht geplant.", "Ein Kollege hat Sie erwähnt, ich wollte mal reinschauen."],
          1: ["Wir fangen gerade an, Lösungen fürs nächste Jahr zu vergleichen, und hätten gern allgemeine Infos.", "Vielleicht wechseln wir irgendwann das System; im Moment sammeln wir nur Unterlagen."],
          2: ["Sie sind mit einem weiteren Anbieter in der engeren Wahl, wir entscheiden bis Monatsende.", "Unser jetziger Vertrag läuft in sechs Wochen aus. Können Sie uns ein Angebot machen?"],
          3: ["Schicken Sie uns heute den Vertrag, wir wollen am Montag mit 20 Lizenzen starten.", "Die Entscheidung steht: Wir nehmen den Business-Tarif. Wo unterschreibe ich?"]},
    budget=["Das Budget liegt bei etwa 400 Euro im Monat.", "Wir haben rund 10.000 Euro dafür eingeplant."],
    senders=["Anja", "J. Brandt"], channels=["E-Mail", "Kontaktformular"],
)


def lead_builder(C):
    def build(rng):
        level = rng.randrange(4)
        intro, size = pick(rng, C["intro"])
        parts = [intro, pick(rng, C["core"][level])]
        budget = level > 0 and rng.random() < 0.45
        if budget:
            parts.insert(rng.choice([1, 2]), pick(rng, C["budget"]))
        return wrap_state(join(*parts), rng, C["senders"], C["channels"], 0.1), dict(ready=level, budget=budget, size=size)
    return build


LEAD_Q = {
    "en": dict(ready_phr=["How close is this prospect to buying?", "Rate this lead's buying readiness.", "How hot is this sales lead?"],
               ready_scales=[(["Cold: just curious, no plans", "Early research: collecting information", "Warm: shortlist, timeline or quote request", "Ready now: wants to sign or pay"], None),
                             (["Not buying", "Exploring", "Evaluating seriously", "Closing"], None),
                             (["No purchase in sight", "Possible later", "Purchase imminent"], {0: 0, 1: 1, 2: 1, 3: 2})],
               budget_phr=["Does the prospect state a budget?", "Is a spending figure given?"], budget_mean=[("An amount they can spend is stated", "No amount is stated")],
               size_phr=["Does the message say how many people work there?", "Is the size of the organisation given as a headcount?"], size_mean=None),
    "es": dict(ready_phr=["¿Qué tan cerca está este cliente potencial de comprar?"],
               ready_scales=[(["Frío: pura curiosidad", "Investigación inicial", "Templado: lista final, plazo o presupuesto", "Listo: quiere firmar o pagar ya"], None)],
               budget_phr=["¿Indica el cliente un presupuesto?"], budget_mean=None, size_phr=["¿Dice el mensaje cuántas personas trabajan allí?"], size_mean=None),
    "pt": dict(ready_phr=["Quão perto de comprar está este cliente em potencial?"],
               ready_scales=[(["Frio: só curiosidade", "Pesquisa inicial", "Morno: lista final, prazo ou orçamento", "Pronto: quer assinar ou pagar já"], None)],
               budget_phr=["O cliente informa um orçamento?"], budget_mean=None, size_phr=["A mensagem diz quantas pessoas trabalham lá?"], size_mean=None),
    "fr": dict(ready_phr=["À quel point ce prospect est-il prêt à acheter ?"],
               ready_scales=[(["Froid : simple curiosité", "Recherche préliminaire", "Tiède : liste finale, échéance ou devis", "Prêt : veut signer ou payer tout de suite"], None)],
               budget_phr=["Le prospect indique-t-il un budget ?"], budget_mean=None, size_phr=["Le message précise-t-il combien de personnes y travaillent ?"], size_mean=None),
    "de": dict(ready_phr=["Wie kaufbereit ist dieser Interessent?"],
               ready_scales=[(["Kalt: reine Neugier", "Frühe Recherche", "Warm: engere Wahl, Termin oder Angebotsanfrage", "Abschlussbereit: will sofort unterschreiben oder zahlen"], None)],
               budget_phr=["Nennt der Interessent ein Budget?"], budget_mean=None, size_phr=["Steht in der Nachricht, wie viele Leute dort arbeiten?"], size_mean=None),
}

for _lg, _n in (("en", 200), ("es", 30), ("pt", 30), ("fr", 30), ("de", 30)):
    Q = LEAD_Q[_lg]
    register("lead_qualification", _lg, _n, lead_builder(LEAD[_lg]),
             [(3, score_q("ready", Q["ready_phr"], Q["ready_scales"])), (1, noul_bool("budget", Q["budget_phr"], Q["budget_mean"])), (0.8, noul_bool("size", Q["size_phr"], Q["size_mean"]))], max_uses=2)

DOCS = {}
DOCS["en"] = {
    "invoice": ["Invoice no. 2024-118. 3 x consulting day at 650.00 = 1,950.00. VAT 20%: 390.00. Total due: 2,340.00. Payment within 30 days to the account below.",
                "Bill to: Harbour Café Ltd. Item: espresso machine service, parts and labour. Amount payable: 185.00 GBP. Due date: 15 May.",
                "Tax invoice for order 77812. Subtotal 42.50, delivery 4.99, total 47.49. Thank you for your business."],
    "contract": ["This Agreement is entered into between the Landlord and the Tenant. The Tenant shall pay rent monthly in advance and give two months' written notice to terminate.",
                 "The Supplier agrees to deliver the goods described in Schedule A. Either party may terminate this agreement for material breach with 30 days' notice.",
                 "Clause 7: Confidentiality. Each party shall keep secret all information received from the other party during the term and for three years after."],
    "resume": ["Experienced warehouse supervisor. 2016-2023: shift lead at NorthPoint Logistics, managed 14 pickers. Skills: forklift licence, SAP, first aid.",
               "Education: BSc Biology, University of Exeter (2019). Experience: lab assistant, 3 years. Languages: English, Spanish (fluent).",
               "Profile: junior front-end developer with a passion for accessible design. Projects: portfolio site, volunteer booking app. References on request."],
    "meeting_notes": ["Attendees: Ravi, Jo, Amaka. Decisions: launch moved to 3 June. Actions: Jo to update the roadmap; Amaka to brief sales by Friday.",
                      "Weekly sync. 1) Hiring: two offers out. 2) Budget: on track. 3) AOB: office move postponed. Next meeting Tuesday 10:00.",
                      "Minutes of the residents' association, 4 March. Agreed to repaint the stairwell. Treasurer reported a balance of 1,240."],
    "recipe": ["Serves 4. Fry one chopped onion in olive oil, add two tins of tomatoes and simmer for 20 minutes. Stir in basil and season to taste.",
               "Ingredients: 200 g flour, 2 eggs, 300 ml milk, a pinch of salt. Whisk until smooth and rest the batter for 30 minutes before frying.",
               "Preheat the oven to 180°C. Cream the butter and sugar, beat in the eggs, fold in the flour and bake for 25 minutes."],
    "job_ad": ["We're hiring! Customer support agent, full-time, hybrid. You'll answer emails and chats in English and German. Apply by 30 April.",
               "Wanted: experienced electrician for our maintenance team. Competitive salary, company van, 28 days' holiday. Send your CV to jobs@ our company.",
               "Part-time barista needed for weekend shifts. No experience necessary, training provided."],
    "press_release": ["FOR IMMEDIATE RELEASE. Greenline Energy today announced the opening of its third solar farm, which will power 12,000 homes.",
                      "City Museum welcomes its one millionth visitor. The museum's director said the milestone reflects growing interest in local history.",
                      "Acme Robotics announces a partnership with two universities to train 500 engineers over the next three years."],
    "bug_report": ["Steps to reproduce: 1. Open settings. 2. Toggle notifications off. 3. Restart. Expected: stays off. Actual: switches back on. Version 4.2.1, Android 14.",
                   "Title: Export crashes with empty date field. Severity: medium. Observed on build 812. Stack trace attached.",
                   "When a username contains an apostrophe, the profile page shows a blank screen. Reproducible every time in Chrome 125."],
}
DOCS["es"] = {
    "invoice": ["Factura n.º 2024-118. 3 jornadas de consultoría a 650,00 € = 1.950,00 €. IVA 21 %: 409,50 €. Total: 2.359,50 €. Pago a 30 días.", "Total a pagar: 47,49 €. Pedido 77812. Gracias por su compra."],
    "contract": ["El arrendatario se obliga a abonar la renta por meses anticipados y a comunicar su baja con dos meses de antelación.", "Cláusula 7: Confidencialidad. Las partes guardarán secreto sobre la información recibida durante la vigencia del contrato."],
    "resume": ["Experiencia: 2016-2023, encargado de turno en un almacén logístico. Formación: FP en Logística. Idiomas: español e inglés.", "Perfil: desarrolladora web júnior. Proyectos: web de portfolio y app de reservas para una ONG. Referencias a petición."],
    "recipe": ["Para 4 personas. Sofríe una cebolla picada, añade dos latas de tomate y deja cocer 20 minutos. Sazona al gusto.", "Ingredientes: 200 g de harina, 2 huevos, 300 ml de leche y una pizca de sal. Bate hasta que no haya grumos."],
    "job_ad": ["¡Buscamos agente de atención al cliente! Jornada completa, modalidad híbrida. Envía tu candidatura antes del 30 de abril.", "Se necesita camarero o camarera para fines de semana. No se requiere experiencia."],
    "meeting_notes": ["Asistentes: Ana, Jorge y Marta. Acuerdos: el lanzamiento se retrasa al 3 de junio. Tareas: Jorge actualiza el plan.", "Acta de la comunidad de vecinos del 4 de marzo. Se aprueba pintar la escalera."],
}
DOCS["pt"] = {
    "invoice": ["Nota fiscal nº 2024-118. 3 diárias de consultoria a R$ 650,00 = R$ 1.950,00. Total a pagar: R$ 1.950,00. Vencimento em 30 dias.", "Total do pedido 77812: R$ 147,49. Obrigado pela compra."],
    "contract": ["O locatário obriga-se a pagar o aluguel mensalmente e a avisar com sessenta dias de antecedência em caso de rescisão.", "Cláusula 7: Confidencialidade. As partes manterão sigilo sobre as informações recebidas durante a vigência deste contrato."],
    "resume": ["Experiência: 2016-2023, líder de turno em centro de distribuição. Formação: técnico em logística. Idiomas: português e inglês.", "Perfil: desenvolvedora front-end júnior. Projetos: site de portfólio e app de agendamento para uma ONG."],
    "recipe": ["Rende 4 porções. Refogue uma cebola picada, junte duas latas de tomate e cozinhe por 20 minutos. Acerte o sal.", "Ingredientes: 2 xícaras de farinha, 2 ovos, 1 xícara de leite e uma pitada de sal. Bata até ficar liso."],
    "job_ad": ["Vaga: atendente de suporte ao cliente, tempo integral, modelo híbrido. Candidaturas até 30 de abril.", "Precisamos de barista para os fins de semana. Não é preciso experiência."],
    "meeting_notes": ["Presentes: Ana, Jorge e Marta. Decisões: lançamento adiado para 3 de junho. Pendências: Jorge atualiza o cronograma.", "Ata da reunião de condomínio de 4 de março. Aprovada a pintura da escada."],
}
DOCS["fr"] = {
    "invoice": ["Facture n° 2024-118. 3 jours de conseil à 650,00 € = 1 950,00 € HT. TVA 20 % : 390,00 €. Total TTC : 2 340,00 €. Paiement à 30 jours.", "Commande 77812 : total à régler 47,49 €. Merci de votre achat."],
    "contract": ["Le locataire s'engage à payer le loyer mensuellement d'avance et à donner un préavis de deux mois pour résilier le bail.", "Article 7 : Confidentialité. Les parties s'engagent à garder secrètes les informations échangées pendant la durée du contrat."],
    "resume": ["Expérience : 2016-2023, chef d'équipe en entrepôt logistique. Formation : BTS Transport. Langues : français, anglais.", "Profil : développeuse front-end junior. Projets : site portfolio et application de réservation pour une association."],
    "recipe": ["Pour 4 personnes. Faites revenir un oignon émincé, ajoutez deux boîtes de tomates et laissez mijoter 20 minutes.", "Ingrédients : 250 g de farine, 3 œufs, 50 cl de lait et une pincée de sel. Mélangez jusqu'à obtenir une pâte lisse."],
    "job_ad": ["Nous recrutons un conseiller clientèle en CDI, télétravail partiel possible. Candidatures avant le 30 avril.", "Recherche serveur ou serveuse pour les week-ends. Débutants acceptés."],
    "meeting_notes": ["Présents : Anne, Julien, Nadia. Décisions : lancement reporté au 3 juin. Actions : Julien met à jour le planning.", "Compte rendu de l'assemblée des copropriétaires du 4 mars. Ravalement de la cage d'escalier approuvé."],
}
DOCS["de"] = {
    "invoice": ["Rechnung Nr. 2024-118. 3 Beratungstage à 650,00 € = 1.950,00 € netto. USt. 19 %: 370,50 €. Gesamtbetrag: 2.320,50 €. Zahlbar innerhalb von 30 Tagen.", "Bestellung 77812: Gesamtbetrag 47,49 €. Vielen Dank für Ihren Einkauf."],
    "contract": ["Der Mieter verpflichtet sich, die Miete monatlich im Voraus zu zahlen und mit einer Frist von zwei Monaten schriftlich zu kündigen.", "§ 7 Vertraulichkeit: Die Parteien verpflichten sich, alle erhaltenen Informationen während der Vertragslaufzeit geheim zu halten."],
    "resume": ["Berufserfahrung: 2016-2023 Schichtleiter im Lager. Ausbildung: Fachkraft für Lagerlogistik. Sprachen: Deutsch, Englisch.", "Profil: Junior-Frontend-Entwicklerin. Projekte: Portfolio-Website und Buchungs-App für einen Verein."],
    "recipe": ["Für 4 Personen. Eine Zwiebel andünsten, zwei Dosen Tomaten dazugeben und 20 Minuten köcheln lassen.", "Zutaten: 250 g Mehl, 3 Eier, 500 ml Milch, eine Prise Salz. Alles glatt rühren und 30 Minuten ruhen lassen."],
    "job_ad": ["Wir suchen dich! Kundenservice in Vollzeit, hybrid. Bewerbungen bis zum 30. April.", "Aushilfe für Wochenendschichten im Café gesucht. Keine Vorkenntnisse nötig."],
    "meeting_notes": ["Teilnehmende: Anja, Jonas, Elif. Beschlüsse: Launch auf den 3. Juni verschoben. Aufgaben: Jonas aktualisiert den Zeitplan.", "Protokoll der Eigentümerversammlung vom 4. März. Der Anstrich des Treppenhauses wurde beschlossen."],
}
DOCS_Q = {
    "en": (["What kind of document is this?", "Identify the document type.", "Which category does this text snippet come from?"],
           {"invoice": ["A bill requesting payment"], "contract": ["A legal agreement with obligations"], "resume": ["A CV describing a candidate"], "meeting_notes": ["Notes or minutes of a meeting"],
            "recipe": ["Cooking instructions"], "job_ad": ["An advert for a vacancy"], "press_release": ["An official announcement for the media"], "bug_report": ["A description of a software defect"],
            "newsletter": ["A periodic update sent to subscribers"]}),
    "es": (["¿Qué tipo de documento es este?"], {"invoice": ["Una factura que pide un pago"], "contract": ["Un acuerdo legal con obligaciones"], "resume": ["Un currículum"], "meeting_notes": ["Un acta o notas de reunión"],
                                                  "recipe": ["Una receta de cocina"], "job_ad": ["Una oferta de empleo"], "press_release": ["Un comunicado de prensa"]}),
    "pt": (["Que tipo de documento é este?"], {"invoice": ["Uma cobrança de pagamento"], "contract": ["Um acordo jurídico com obrigações"], "resume": ["Um currículo"], "meeting_notes": ["Ata ou anotações de reunião"],
                                                "recipe": ["Uma receita culinária"], "job_ad": ["Um anúncio de vaga"], "press_release": ["Um comunicado à imprensa"]}),
    "fr": (["De quel type de document s'agit-il ?"], {"invoice": ["Une facture demandant un paiement"], "contract": ["Un accord juridique avec des obligations"], "resume": ["Un CV"], "meeting_notes": ["Un compte rendu de réunion"],
                                                       "recipe": ["Une recette de cuisine"], "job_ad": ["Une offre d'emploi"], "press_release": ["Un communiqué de presse"]}),
    "de": (["Um welche Art von Dokument handelt es sich?"], {"invoice": ["Eine Rechnung mit Zahlungsaufforderung"], "contract": ["Eine rechtliche Vereinbarung mit Pflichten"], "resume": ["Ein Lebenslauf"],
                                                             "meeting_notes": ["Ein Besprechungsprotokoll"], "recipe": ["Ein Kochrezept"], "job_ad": ["Eine Stellenanzeige"], "press_release": ["Eine Pressemitteilung"]}),
}


def doc_builder(D):
    kinds = sorted(D)

    def build(rng):
        k = pick(rng, kinds)
        return pick(rng, D[k]), dict(doc=k)
    return build


for _lg, _n in (("en", 110), ("es", 24), ("pt", 24), ("fr", 24), ("de", 24)):
    register("document_type", _lg, _n, doc_builder(DOCS[_lg]), [(1, choice_q("doc", DOCS_Q[_lg][0], DOCS_Q[_lg][1]))], max_uses=5)

# More English intent utterances (same labels), for variety.
_MORE_INTENT_EN = {
    ("banking", "card_lost"): ["My card isn't in my purse any more and I last used it at the supermarket.", "Lost my credit card on holiday in Spain, what do I do?"],
    ("banking", "transfer"): ["I want to wire money to a supplier in Germany, what details do you need?", "Can you help me pay 45 pounds to my football club's account?"],
    ("banking", "balance"): ["Did my salary come in? I want to see what's in the account.", "Tell me how much is left on the joint account please."],
    ("banking", "dispute"): ["I've been charged three times for one hotel night, I want to challenge that.", "Why is there a payment to an online casino? I never gamble."],
    ("banking", "loan"): ["How much could I borrow for a small business if I earn 40k?", "Looking for a personal loan to consolidate my credit cards."],
    ("banking", "open_account"): ["Can a 16-year-old open an account with you?", "I've just moved to the UK, can I open a current account without a utility bill?"],
    ("travel", "book"): ["Reserve a table-for-two dinner cruise on Saturday in Amsterdam.", "I'm looking for a return flight from Dublin to Boston in early October."],
    ("travel", "cancel"): ["Something came up, please cancel the car rental for next week.", "Kindly cancel my seat on the 6 pm ferry."],
    ("travel", "change"): ["Can I change the name on the ticket? My colleague is going instead of me.", "I'd like to extend my hotel stay by one night."],
    ("travel", "baggage"): ["The handle of my suitcase was ripped off during the flight.", "Can I take a guitar on board as hand luggage?"],
    ("travel", "refund_request"): ["The museum was closed on the day of our tour; please return what we paid.", "We were moved to a worse hotel, so we expect a partial refund."],
    ("travel", "visa_info"): ["Does my 14-year-old need her own passport to go to Morocco?", "What paperwork do I need to travel to Canada as an EU citizen?"],
    ("shopping", "track"): ["The tracking number you sent doesn't work, where is my parcel?", "My order from Monday still says processing. When will it ship?"],
    ("shopping", "return_item"): ["The shoes rub my heels, I want to send them back for a refund.", "How long do I have to return an unopened phone case?"],
    ("shopping", "stock"): ["Will the large green rug be restocked before Christmas?", "Is the red version of this kettle still available online?"],
    ("shopping", "discount"): ["Do you price match if I find it cheaper elsewhere?", "Is there a code for first-time customers?"],
    ("shopping", "change_address"): ["I've moved flats; can the pending order go to 9 Elm Road instead?", "Please redirect my delivery to the pickup point near my work."],
    ("shopping", "product_question"): ["Is the jacket actually waterproof or just water resistant?", "What's the warranty on this washing machine?"],
    ("hr", "leave"): ["I'd like to request parental leave starting in September.", "Could I swap my Monday off for Wednesday next week?"],
    ("hr", "payslip"): ["My tax code looks wrong on this month's payslip.", "I was paid less than usual and don't know why."],
    ("hr", "sick"): ["I've been throwing up all night, I won't be in today.", "My GP says I should stay home until Thursday with bronchitis."],
    ("hr", "benefits"): ["Does the company still match pension contributions?", "How do I claim the cycle-to-work scheme?"],
    ("hr", "resignation"): ["After five great years I've decided to move on; here is my notice.", "I'd like to resign and would appreciate an exit interview."],
    ("it_helpdesk", "password"): ["I keep getting 'invalid credentials' even though I typed my password carefully.", "Need a password reset for the payroll system."],
    ("it_helpdesk", "hardware"): ["My keyboard is missing the E key.", "The projector in room 3 won't turn on."],
    ("it_helpdesk", "software_install"): ["Could you install the latest Adobe Reader for me?", "Please add Zoom to my work laptop."],
    ("it_helpdesk", "network"): ["The internet keeps dropping at my desk on the third floor.", "I can't connect to the office Wi-Fi with my new phone."],
    ("it_helpdesk", "access_request"): ["Please grant me admin rights on the test server.", "I need to see the HR folder on the shared drive."],
    ("it_helpdesk", "phishing_report"): ["An email claiming to be from our bank asks me to confirm my login. Reporting it.", "Weird message with an invoice attachment from someone I don't know."],
    ("healthcare", "book_appt"): ["I'd like to see a nurse about my ear infection.", "Can I get an appointment for a smear test?"],
    ("healthcare", "cancel_appt"): ["Please cancel Friday's appointment for Tom Hayes.", "We won't be coming in tomorrow morning, please cancel our slot."],
    ("healthcare", "reschedule"): ["Could my appointment on the 5th be moved to the 12th?", "Can I come an hour earlier than my booked time on Wednesday?"],
    ("healthcare", "prescription"): ["I need a new prescription for my antihistamines.", "My repeat for insulin hasn't come through to the pharmacy."],
    ("healthcare", "results"): ["Did the urine test show anything?", "When will my biopsy results be ready?"],
}
for (_sub, _it), _utts in sorted(_MORE_INTENT_EN.items()):
    INTENT["en"][_sub][1][_it][2].extend(_utts)

# More non-English forum posts and intent utterances (same labels), for variety.
_MORE_POSTS = {
    "es": {"cocina": ["¿Qué aceite usáis para freír churros en casa?", "Os dejo mi truco para que las lentejas no se peguen: remover poco y a fuego suave."],
           "ciclismo": ["¿Merece la pena montar tubeless en una bici de carretera?", "Hoy he hecho mis primeros 80 km seguidos, ¡contentísimo!"],
           "jardinería": ["¿Cada cuánto abonáis los geranios del balcón?", "Mis pimientos tienen pulgón otra vez. ¿Algún remedio casero?"]},
    "pt": {"culinária": ["Qual óleo vocês usam para fritar pastel em casa?", "Dica para o feijão não grudar: mexer pouco e fogo baixo."],
           "ciclismo": ["Vale a pena usar tubeless na bike de estrada?", "Hoje pedalei 80 km direto pela primeira vez, muito feliz!"],
           "jardinagem": ["De quanto em quanto tempo vocês adubam os gerânios?", "Meus pimentões estão com pulgão de novo. Algum remédio caseiro?"]},
    "fr": {"cuisine": ["Quelle huile utilisez-vous pour la friture des beignets ?", "Mon astuce pour des lentilles qui n'attachent pas : feu doux et on remue peu."],
           "vélo": ["Le tubeless vaut-il le coup sur un vélo de route ?", "Aujourd'hui, mes premiers 80 km d'une traite, je suis ravi !"],
           "jardinage": ["Tous les combien mettez-vous de l'engrais aux géraniums ?", "Mes poivrons ont encore des pucerons. Un remède maison ?"]},
    "de": {"Kochen": ["Welches Öl nehmt ihr zum Frittieren von Krapfen?", "Mein Tipp, damit Linsen nicht anbrennen: kleine Hitze und wenig rühren."],
           "Radfahren": ["Lohnt sich Tubeless am Rennrad?", "Heute zum ersten Mal 80 km am Stück gefahren, bin total happy!"],
           "Gärtnern": ["Wie oft düngt ihr eure Balkongeranien?", "Meine Paprika haben schon wieder Blattläuse. Gibt es ein Hausmittel?"]},
}
for _lg, _tp in sorted(_MORE_POSTS.items()):
    for _t, _posts in sorted(_tp.items()):
        MOD[_lg]["topics"][_t].extend(_posts)

_MORE_INTENT = {
    "es": {("banking", "card_lost"): "No encuentro la tarjeta desde el sábado, ¿podéis congelarla?", ("banking", "transfer"): "Quiero mandar 50 euros a mi hermana a su cuenta de Ibercaja.",
           ("banking", "balance"): "¿Me ha entrado ya la nómina? Quiero ver el saldo.", ("banking", "dispute"): "Me han cobrado dos veces la misma compra en una gasolinera.",
           ("banking", "loan"): "¿Cuánto me prestaríais para un coche de segunda mano?", ("travel", "book"): "Necesito un hotel en Sevilla para dos noches a partir del viernes.",
           ("travel", "cancel"): "Anulad, por favor, el coche de alquiler de la semana que viene.", ("travel", "change"): "¿Puedo cambiar el nombre del billete? Va mi compañera en mi lugar.",
           ("travel", "baggage"): "Me han roto el asa de la maleta durante el vuelo.", ("healthcare", "book_appt"): "Quisiera cita con la enfermera para una cura.",
           ("healthcare", "cancel_appt"): "Anulad la cita del viernes de mi padre, Antonio Pérez.", ("healthcare", "reschedule"): "¿Me podéis cambiar la cita del día 5 al día 12?",
           ("healthcare", "prescription"): "Necesito que me renueven la receta del antihistamínico."},
    "pt": {("banking", "card_lost"): "Não acho meu cartão desde sábado, dá para bloquear?", ("banking", "transfer"): "Quero mandar 100 reais para minha irmã.",
           ("banking", "balance"): "Meu salário já caiu? Quero ver o saldo.", ("banking", "dispute"): "Cobraram duas vezes a mesma compra no posto de gasolina.",
           ("banking", "loan"): "Quanto vocês emprestariam para um carro usado?", ("shopping", "track"): "O código de rastreio que mandaram não funciona. Cadê o pacote?",
           ("shopping", "return_item"): "O tênis machuca o calcanhar, quero devolver e receber o dinheiro de volta.", ("shopping", "stock"): "O tapete verde grande volta ao estoque antes do Natal?",
           ("shopping", "discount"): "Tem cupom para primeira compra?", ("hr", "leave"): "Gostaria de trocar minha folga de segunda por quarta na semana que vem.",
           ("hr", "payslip"): "Recebi menos do que o normal e não sei por quê.", ("hr", "sick"): "Passei a noite vomitando, hoje não vou conseguir trabalhar.",
           ("hr", "resignation"): "Depois de cinco anos, decidi seguir outro caminho; este é meu aviso de desligamento."},
    "fr": {("banking", "card_lost"): "Je ne retrouve plus ma carte depuis samedi, pouvez-vous la bloquer ?", ("banking", "transfer"): "Je veux envoyer 50 € à ma sœur sur son compte.",
           ("banking", "balance"): "Mon salaire est-il arrivé ? Je voudrais voir mon solde.", ("banking", "dispute"): "On m'a débité deux fois le même plein d'essence.",
           ("banking", "loan"): "Combien pourriez-vous me prêter pour une voiture d'occasion ?", ("travel", "book"): "Il me faut un hôtel à Bordeaux pour deux nuits à partir de vendredi.",
           ("travel", "cancel"): "Merci d'annuler la voiture de location de la semaine prochaine.", ("travel", "change"): "Puis-je changer le nom sur le billet ? Une collègue part à ma place.",
           ("travel", "baggage"): "La poignée de ma valise a été arrachée pendant le vol.", ("it_helpdesk", "password"): "J'ai besoin d'une réinitialisation du mot de passe pour le logiciel de paie.",
           ("it_helpdesk", "hardware"): "Le vidéoprojecteur de la salle 3 ne s'allume plus.", ("it_helpdesk", "network"): "Impossible de connecter mon nouveau téléphone au wifi du bureau.",
           ("it_helpdesk", "phishing_report"): "Un mail soi-disant de notre banque me demande de confirmer mes identifiants. Je le signale."},
    "de": {("banking", "card_lost"): "Ich finde meine Karte seit Samstag nicht mehr, können Sie sie sperren?", ("banking", "transfer"): "Ich möchte meiner Schwester 50 Euro überweisen.",
           ("banking", "balance"): "Ist mein Gehalt schon eingegangen? Ich möchte den Kontostand sehen.", ("banking", "dispute"): "Mir wurde dieselbe Tankfüllung zweimal abgebucht.",
           ("banking", "loan"): "Wie viel würden Sie mir für einen Gebrauchtwagen leihen?", ("hr", "leave"): "Kann ich meinen freien Montag nächste Woche auf Mittwoch tauschen?",
           ("hr", "payslip"): "Ich habe weniger Gehalt bekommen als sonst und weiß nicht, warum.", ("hr", "sick"): "Ich habe die ganze Nacht erbrochen und komme heute nicht.",
           ("hr", "resignation"): "Nach fünf Jahren habe ich mich entschieden, das Unternehmen zu verlassen; anbei meine Kündigung.", ("it_helpdesk", "password"): "Ich brauche ein neues Passwort für die Lohnsoftware.",
           ("it_helpdesk", "hardware"): "Der Beamer in Raum 3 geht nicht mehr an.", ("it_helpdesk", "network"): "Mein neues Handy verbindet sich nicht mit dem Büro-WLAN.",
           ("it_helpdesk", "phishing_report"): "Eine angebliche Mail unserer Bank will, dass ich meine Zugangsdaten bestätige. Ich melde das hiermit."},
}
for _lg, _m in sorted(_MORE_INTENT.items()):
    for (_sub, _it), _u in sorted(_m.items()):
        INTENT[_lg][_sub][1][_it][2].append(_u)


# ======================================================================================
# MAIN
# ======================================================================================
def generate():
    out = []
    for g in GENS:
        rng = random.Random("%d/%s/%s" % (SEED, g["domain"], g["lang"]))
        uses = collections.Counter()
        qs = g["questions"]
        weights = [w for w, _ in qs]
        made, tries = 0, 0
        nl = collections.Counter()
        sl = collections.defaultdict(collections.Counter)
        while made < g["n"] and tries < g["n"] * 60:
            tries += 1
            state, attrs = g["builder"](rng)
            key = json.dumps(state, ensure_ascii=False, sort_keys=True)
            if uses[key] >= g["max_uses"]:
                continue
            q = None
            for _ in range(12):
                fn = rng.choices([f for _, f in qs], weights=weights)[0]
                q = fn(attrs, rng)
                if q is not None:
                    break
            if q is None:
                continue
            typ, instr, crit, label = q
            # keep yes/no answers and scale levels balanced within each (domain, language)
            if typ == "noul" and nl[label] > nl[not label] + 2 and rng.random() < 0.85:
                continue
            if typ == "score":
                cnt = sl[len(crit)]
                if cnt[label] > min(cnt[i] for i in range(len(crit))) + 3 and rng.random() < 0.7:
                    continue
                cnt[label] += 1
            if typ == "noul":
                nl[label] += 1
            uses[key] += 1
            made += 1
            out.append(dict(lang=g["lang"], domain=g["domain"], state=state, type=typ, instructions=instr, criteria=crit, label=label))
        if made < g["n"]:
            print("warning: %s/%s made %d of %d" % (g["domain"], g["lang"], made, g["n"]), file=sys.stderr)
    # stable ids per language
    per_lang = collections.Counter()
    for ex in out:
        per_lang[ex["lang"]] += 1
        ex["id"] = "a-%s-%05d" % (ex["lang"], per_lang[ex["lang"]])
    keys = ["id", "lang", "domain", "state", "type", "instructions", "criteria", "label"]
    return [{k: ex[k] for k in keys} for ex in out]


def validate(ex):
    t, c, y = ex["type"], ex["criteria"], ex["label"]
    if t == "noul":
        assert isinstance(y, bool) and (c is None or set(c) == {"true", "false"}), ex
    elif t == "choice":
        assert isinstance(c, dict) and 2 <= len(c) <= 8 and y in c, ex
    elif t == "score":
        assert isinstance(c, list) and 3 <= len(c) <= 5 and isinstance(y, int) and 0 <= y < len(c), ex
    else:
        raise AssertionError(ex)


def source_md(exs):
    c = collections.Counter

    def table(title, counter):
        rows = "".join("| %s | %d |\n" % (k, v) for k, v in sorted(counter.items()))
        return "| %s | examples |\n|---|---|\n%s" % (title, rows)

    states = set(json.dumps(e["state"], ensure_ascii=False, sort_keys=True) for e in exs)
    non_en = sum(1 for e in exs if e["lang"] != "en")
    nl = c(e["label"] for e in exs if e["type"] == "noul")
    return """# Project-authored decision examples

`examples.jsonl` holds %(n)d decision examples (%(distinct)d distinct states) in the schema of
`eval/dev/*.jsonl`: `id`, `lang`, `domain`, `state`, `type` (`noul`, `choice`, `score`),
`instructions`, `criteria`, `label`. They are training data for the cross-encoder of issue 12.

## How they were made

Written by this project for this purpose. `scripts/author-decision-examples.py` (Python 3,
standard library only, fixed seed `%(seed)d`, deterministic: the same script writes the same
bytes) composes every example from hand-written content kept in that script: situations
(support messages, review sentences with their star level, forum posts, incident reports,
intent utterances, short notices with known facts), optional greetings, reference numbers,
deadlines and tone sentences whose effect on the label is known, question phrasings, option
sets with descriptions and ordered scales, in English, Spanish, Portuguese, French and German
(the non-English content was written in each language, not translated word by word). The gold
label follows from construction: e.g. a review built from two major complaints and a
"waste of money" verdict is 1 star and negative; a support message given the "furious"
tone sentence is at the top of the frustration scale; a facts question asks about a day or name
that the composed text does or does not contain. Questions whose answer would be arguable are
not asked of that state (e.g. "mixed" is never a distractor for a 4-star review, a sarcastic
reply is never asked whether it is a personal attack).

Per example: option order is shuffled; about a third of `choice` examples have empty option
descriptions (only the keys are seen); about half of the `noul` examples describe what yes and
no mean; yes/no answers and scale levels are balanced per domain and language.

No text, template, question phrasing, option set or scale wording was taken from `eval/dev`
or from any public data set. `test/authored-data.test.ts` checks this against `eval/dev`: no
state, question, option or level text equal after normalisation; every state's word-3-gram
Jaccard similarity with every eval/dev state below 0.5 and no 8-word run in common; no question
sharing a 6-word run with an eval/dev question.

Regenerate: `/usr/bin/python3 scripts/author-decision-examples.py` (under a second).

License: same as the project, Apache-2.0.

## Counts

Non-English: %(non_en)d of %(n)d (%(share).1f%%). `noul` labels: %(yes)d true, %(no)d false.

%(lang)s
%(type)s
%(domain)s""" % dict(n=len(exs), distinct=len(states), seed=SEED, non_en=non_en, share=100.0 * non_en / len(exs), yes=nl[True], no=nl[False],
                     lang=table("language", c(e["lang"] for e in exs)), type=table("type", c(e["type"] for e in exs)),
                     domain=table("domain", c(e["domain"] for e in exs)))


def main():
    import time
    t0 = time.time()
    exs = generate()
    for ex in exs:
        validate(ex)
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "examples.jsonl"), "w", encoding="utf-8") as f:
        for ex in exs:
            f.write(json.dumps(ex, ensure_ascii=False) + "\n")
    c = collections.Counter
    with open(os.path.join(OUT_DIR, "SOURCE.md"), "w", encoding="utf-8") as f:
        f.write(source_md(exs))
    print("examples:", len(exs), "in %.1fs" % (time.time() - t0))
    print("by lang:", dict(sorted(c(e["lang"] for e in exs).items())))
    print("by type:", dict(sorted(c(e["type"] for e in exs).items())))
    print("by domain:", dict(sorted(c(e["domain"] for e in exs).items())))
    states = set(json.dumps(e["state"], ensure_ascii=False, sort_keys=True) for e in exs)
    print("distinct states:", len(states))
    nl = c(e["label"] for e in exs if e["type"] == "noul")
    print("noul labels:", dict(nl), "with meanings:", sum(1 for e in exs if e["type"] == "noul" and e["criteria"]))
    pos = c()
    for e in exs:
        if e["type"] == "choice":
            pos[list(e["criteria"]).index(e["label"])] += 1
    print("choice gold position:", dict(sorted(pos.items())))
    print("choice empty descriptions:", sum(1 for e in exs if e["type"] == "choice" and all(v == "" for v in e["criteria"].values())))
    sc = c((len(e["criteria"]), e["label"]) for e in exs if e["type"] == "score")
    print("score (levels, label):", dict(sorted(sc.items())))


if __name__ == "__main__":
    main()
