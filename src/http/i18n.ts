/**
 * Error messages in English, Spanish, Portuguese, French and German. Only the human text changes with
 * the language; error.type and detail[].type never do. Placeholders are {name}.
 */
const ALL_LANGS = ["en", "es", "pt", "fr", "de"] as const;
/** Derived from the list, so a language cannot be in one and missing from the other. */
export type Lang = (typeof ALL_LANGS)[number];
export const LANGS: readonly Lang[] = ALL_LANGS;

/** Every message code must have a text in every language: `satisfies Record<string, Catalog>` fails to compile otherwise. */
type Catalog = Record<Lang, string>;

export const MESSAGES = {
  invalid_json: {
    en: "The body is not valid JSON.",
    es: "El cuerpo no es JSON válido.",
    pt: "O corpo não é um JSON válido.",
    fr: "Le corps n'est pas un JSON valide.",
    de: "Der Anfrage-Body ist kein gültiges JSON.",
  },
  invalid_json_at: {
    en: "The body is not valid JSON: line {line}, column {column}.",
    es: "El cuerpo no es JSON válido: línea {line}, columna {column}.",
    pt: "O corpo não é um JSON válido: linha {line}, coluna {column}.",
    fr: "Le corps n'est pas un JSON valide : ligne {line}, colonne {column}.",
    de: "Der Anfrage-Body ist kein gültiges JSON: Zeile {line}, Spalte {column}.",
  },
  compressed_without_encoding: {
    en: "The body is {encoding}-compressed but has no Content-Encoding header: send 'Content-Encoding: {encoding}'.",
    es: "El cuerpo está comprimido con {encoding} pero falta la cabecera Content-Encoding: envíe 'Content-Encoding: {encoding}'.",
    pt: "O corpo está comprimido com {encoding} mas falta o cabeçalho Content-Encoding: envie 'Content-Encoding: {encoding}'.",
    fr: "Le corps est compressé en {encoding} mais l'en-tête Content-Encoding manque : envoyez 'Content-Encoding: {encoding}'.",
    de: "Der Anfrage-Body ist mit {encoding} komprimiert, aber der Header Content-Encoding fehlt: Senden Sie 'Content-Encoding: {encoding}'.",
  },
  invalid_request: {
    en: "The request could not be parsed as HTTP.",
    es: "No se pudo interpretar la solicitud como HTTP.",
    pt: "Não foi possível interpretar o pedido como HTTP.",
    fr: "La requête n'a pas pu être interprétée comme HTTP.",
    de: "Die Anfrage konnte nicht als HTTP interpretiert werden.",
  },
  invalid_utf8: {
    en: "The body is not valid UTF-8.",
    es: "El cuerpo no es UTF-8 válido.",
    pt: "O corpo não é UTF-8 válido.",
    fr: "Le corps n'est pas de l'UTF-8 valide.",
    de: "Der Anfrage-Body ist kein gültiges UTF-8.",
  },
  decompress_failed: {
    en: "The body could not be decompressed as {encoding}.",
    es: "No se pudo descomprimir el cuerpo como {encoding}.",
    pt: "Não foi possível descomprimir o corpo como {encoding}.",
    fr: "Impossible de décompresser le corps en tant que {encoding}.",
    de: "Der Anfrage-Body konnte nicht als {encoding} dekomprimiert werden.",
  },
  unsupported_encoding: {
    en: "Content-Encoding '{encoding}' is not supported; use zstd, gzip, x-gzip or identity.",
    es: "Content-Encoding '{encoding}' no es compatible; use zstd, gzip, x-gzip o identity.",
    pt: "Content-Encoding '{encoding}' não é suportado; use zstd, gzip, x-gzip ou identity.",
    fr: "Content-Encoding '{encoding}' n'est pas pris en charge ; utilisez zstd, gzip, x-gzip ou identity.",
    de: "Content-Encoding '{encoding}' wird nicht unterstützt; verwenden Sie zstd, gzip, x-gzip oder identity.",
  },
  too_large: {
    en: "The body is larger than {limit} bytes after decompression.",
    es: "El cuerpo supera {limit} bytes tras la descompresión.",
    pt: "O corpo excede {limit} bytes após a descompressão.",
    fr: "Le corps dépasse {limit} octets après décompression.",
    de: "Der Anfrage-Body ist nach der Dekomprimierung größer als {limit} Bytes.",
  },
  body_timeout: {
    en: "The body did not arrive within {seconds} seconds.",
    es: "El cuerpo no llegó en {seconds} segundos.",
    pt: "O corpo não chegou em {seconds} segundos.",
    fr: "Le corps n'est pas arrivé en {seconds} secondes.",
    de: "Der Anfrage-Body ist nicht innerhalb von {seconds} Sekunden eingetroffen.",
  },
  unsupported_content_type: {
    en: "Content-Type '{type}' is not supported; send application/json in UTF-8.",
    es: "Content-Type '{type}' no es compatible; envíe application/json en UTF-8.",
    pt: "Content-Type '{type}' não é suportado; envie application/json em UTF-8.",
    fr: "Content-Type '{type}' n'est pas pris en charge ; envoyez application/json en UTF-8.",
    de: "Content-Type '{type}' wird nicht unterstützt; senden Sie application/json in UTF-8.",
  },
  text_only: {
    en: "This service reads text only: images, assets, files, Box questions and multipart bodies are not supported.",
    es: "Este servicio solo lee texto: no se admiten imágenes, recursos, archivos, preguntas Box ni cuerpos multipart.",
    pt: "Este serviço lê apenas texto: imagens, recursos, arquivos, perguntas Box e corpos multipart não são suportados.",
    fr: "Ce service ne lit que du texte : les images, ressources, fichiers, questions Box et corps multipart ne sont pas pris en charge.",
    de: "Dieser Dienst liest nur Text: Bilder, Ressourcen, Dateien, Box-Fragen und Multipart-Bodys werden nicht unterstützt.",
  },
  auth_missing: {
    en: "Missing API key: send the header 'Authorization: Bearer <key>'.",
    es: "Falta la clave de API: envíe la cabecera 'Authorization: Bearer <clave>'.",
    pt: "Falta a chave de API: envie o cabeçalho 'Authorization: Bearer <chave>'.",
    fr: "Clé d'API manquante : envoyez l'en-tête 'Authorization: Bearer <clé>'.",
    de: "API-Schlüssel fehlt: Senden Sie den Header 'Authorization: Bearer <Schlüssel>'.",
  },
  auth_scheme: {
    en: "The Authorization header must use the Bearer scheme: send 'Authorization: Bearer <key>' ('Bearer ' is missing).",
    es: "La cabecera Authorization debe usar el esquema Bearer: envíe 'Authorization: Bearer <clave>' (falta 'Bearer ').",
    pt: "O cabeçalho Authorization deve usar o esquema Bearer: envie 'Authorization: Bearer <chave>' (falta 'Bearer ').",
    fr: "L'en-tête Authorization doit utiliser le schéma Bearer : envoyez 'Authorization: Bearer <clé>' ('Bearer ' manque).",
    de: "Der Header Authorization muss das Schema Bearer verwenden: Senden Sie 'Authorization: Bearer <Schlüssel>' ('Bearer ' fehlt).",
  },
  auth_invalid: {
    en: "Invalid or revoked API key.",
    es: "Clave de API no válida o revocada.",
    pt: "Chave de API inválida ou revogada.",
    fr: "Clé d'API invalide ou révoquée.",
    de: "Ungültiger oder widerrufener API-Schlüssel.",
  },
  calibration_answer: {
    en: "The right answer must be {expected}.",
    es: "La respuesta correcta debe ser {expected}.",
    pt: "A resposta certa deve ser {expected}.",
    fr: "La bonne réponse doit être {expected}.",
    de: "Die richtige Antwort muss {expected} sein.",
  },
  calibration_name: {
    en: "A calibration needs a name of 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit.",
    es: "Una calibración necesita un nombre de 1 a 64 letras, dígitos, '_', '-' o '.', que empiece por letra o dígito.",
    pt: "Uma calibração precisa de um nome de 1 a 64 letras, dígitos, '_', '-' ou '.', começando por letra ou dígito.",
    fr: "Une calibration a besoin d'un nom de 1 à 64 lettres, chiffres, '_', '-' ou '.', commençant par une lettre ou un chiffre.",
    de: "Eine Kalibrierung braucht einen Namen aus 1 bis 64 Buchstaben, Ziffern, '_', '-' oder '.', beginnend mit einem Buchstaben oder einer Ziffer.",
  },
  calibration_too_few: {
    en: "A calibration needs at least {min} labeled examples; got {n}.",
    es: "Una calibración necesita al menos {min} ejemplos etiquetados; se recibieron {n}.",
    pt: "Uma calibração precisa de pelo menos {min} exemplos rotulados; foram recebidos {n}.",
    fr: "Une calibration nécessite au moins {min} exemples étiquetés ; reçu {n}.",
    de: "Eine Kalibrierung braucht mindestens {min} beschriftete Beispiele; erhalten: {n}.",
  },
  calibration_models_mixed: {
    en: "The examples name different models ({models}); fit one calibration per model.",
    es: "Los ejemplos nombran modelos distintos ({models}); ajuste una calibración por modelo.",
    pt: "Os exemplos indicam modelos diferentes ({models}); ajuste uma calibração por modelo.",
    fr: "Les exemples nomment des modèles différents ({models}) ; ajustez une calibration par modèle.",
    de: "Die Beispiele nennen verschiedene Modelle ({models}); passen Sie je Modell eine Kalibrierung an.",
  },
  calibration_not_found: {
    en: "This key has no calibration named '{name}'.",
    es: "Esta clave no tiene ninguna calibración llamada '{name}'.",
    pt: "Esta chave não tem nenhuma calibração chamada '{name}'.",
    fr: "Cette clé n'a aucune calibration nommée '{name}'.",
    de: "Dieser Schlüssel hat keine Kalibrierung namens '{name}'.",
  },
  calibration_stale: {
    en: "The calibration '{name}' was fitted on model {fitted}, but model {serving} answers now; fit it again.",
    es: "La calibración '{name}' se ajustó con el modelo {fitted}, pero ahora responde el modelo {serving}; ajústela de nuevo.",
    pt: "A calibração '{name}' foi ajustada com o modelo {fitted}, mas agora responde o modelo {serving}; ajuste-a de novo.",
    fr: "La calibration '{name}' a été ajustée sur le modèle {fitted}, mais le modèle {serving} répond maintenant ; ajustez-la de nouveau.",
    de: "Die Kalibrierung '{name}' wurde mit Modell {fitted} angepasst, jetzt antwortet aber Modell {serving}; passen Sie sie neu an.",
  },
  idempotency_key_invalid: {
    en: "The Idempotency-Key header must be 1 to {max} characters.",
    es: "La cabecera Idempotency-Key debe tener entre 1 y {max} caracteres.",
    pt: "O cabeçalho Idempotency-Key deve ter de 1 a {max} caracteres.",
    fr: "L'en-tête Idempotency-Key doit compter de 1 à {max} caractères.",
    de: "Der Header Idempotency-Key muss 1 bis {max} Zeichen lang sein.",
  },
  idempotency_key_reused: {
    en: "This Idempotency-Key was already used with a different request body; use a new key for a new request.",
    es: "Esta Idempotency-Key ya se usó con otro cuerpo de solicitud; use una clave nueva para una solicitud nueva.",
    pt: "Esta Idempotency-Key já foi usada com outro corpo de requisição; use uma chave nova para uma nova requisição.",
    fr: "Cette Idempotency-Key a déjà servi avec un autre corps de requête ; utilisez une nouvelle clé pour une nouvelle requête.",
    de: "Dieser Idempotency-Key wurde bereits mit einem anderen Anfrage-Body verwendet; verwenden Sie für eine neue Anfrage einen neuen Schlüssel.",
  },
  model_not_found: {
    en: "Model '{model}' does not exist. Available: {available}.",
    es: "El modelo '{model}' no existe. Disponibles: {available}.",
    pt: "O modelo '{model}' não existe. Disponíveis: {available}.",
    fr: "Le modèle '{model}' n'existe pas. Disponibles : {available}.",
    de: "Das Modell '{model}' existiert nicht. Verfügbar: {available}.",
  },
  route_not_found: {
    en: "No such endpoint: {method} {path}.",
    es: "No existe el endpoint {method} {path}.",
    pt: "Não existe o endpoint {method} {path}.",
    fr: "Point d'accès inexistant : {method} {path}.",
    de: "Diesen Endpunkt gibt es nicht: {method} {path}.",
  },
  method_not_allowed: {
    en: "Method {method} is not allowed on {path}; use {allow}.",
    es: "El método {method} no está permitido en {path}; use {allow}.",
    pt: "O método {method} não é permitido em {path}; use {allow}.",
    fr: "La méthode {method} n'est pas autorisée sur {path} ; utilisez {allow}.",
    de: "Die Methode {method} ist für {path} nicht erlaubt; verwenden Sie {allow}.",
  },
  per_minute: {
    en: "Rate limit reached: {limit} requests per minute. Retry in {retry} s.",
    es: "Límite alcanzado: {limit} solicitudes por minuto. Reintente en {retry} s.",
    pt: "Limite atingido: {limit} pedidos por minuto. Tente novamente em {retry} s.",
    fr: "Limite atteinte : {limit} requêtes par minute. Réessayez dans {retry} s.",
    de: "Ratenlimit erreicht: {limit} Anfragen pro Minute. Versuchen Sie es in {retry} s erneut.",
  },
  per_day: {
    en: "Daily limit reached: {limit} requests per day. Retry in {retry} s.",
    es: "Límite diario alcanzado: {limit} solicitudes por día. Reintente en {retry} s.",
    pt: "Limite diário atingido: {limit} pedidos por dia. Tente novamente em {retry} s.",
    fr: "Limite quotidienne atteinte : {limit} requêtes par jour. Réessayez dans {retry} s.",
    de: "Tageslimit erreicht: {limit} Anfragen pro Tag. Versuchen Sie es in {retry} s erneut.",
  },
  monthly_quota: {
    en: "Monthly quota reached: {limit} input tokens per month, {used} used, this request needs {need}. Retry in {retry} s.",
    es: "Cuota mensual alcanzada: {limit} tokens de entrada por mes, {used} usados, esta solicitud necesita {need}. Reintente en {retry} s.",
    pt: "Cota mensal atingida: {limit} tokens de entrada por mês, {used} usados, este pedido precisa de {need}. Tente novamente em {retry} s.",
    fr: "Quota mensuel atteint : {limit} jetons d'entrée par mois, {used} utilisés, cette requête en demande {need}. Réessayez dans {retry} s.",
    de: "Monatskontingent erreicht: {limit} Eingabe-Tokens pro Monat, {used} verbraucht, diese Anfrage benötigt {need}. Versuchen Sie es in {retry} s erneut.",
  },
  key_limit: {
    en: "This key's own limit is reached ({window}: {limit}). Retry in {retry} s.",
    es: "Se alcanzó el límite propio de esta clave ({window}: {limit}). Reintente en {retry} s.",
    pt: "O limite próprio desta chave foi atingido ({window}: {limit}). Tente novamente em {retry} s.",
    fr: "La limite propre à cette clé est atteinte ({window} : {limit}). Réessayez dans {retry} s.",
    de: "Das eigene Limit dieses Schlüssels ist erreicht ({window}: {limit}). Versuchen Sie es in {retry} s erneut.",
  },
  request_exceeds_quota: {
    en: "This request alone needs {need} input tokens, more than this key's whole monthly quota of {limit}: it cannot be answered under this quota, now or later. Send fewer or shorter questions, options or state, or raise the quota.",
    es: "Esta solicitud sola necesita {need} tokens de entrada, más que toda la cuota mensual de esta clave ({limit}): no puede responderse con esta cuota, ni ahora ni después. Envíe menos preguntas, opciones o estado, o más cortos, o aumente la cuota.",
    pt: "Este pedido sozinho precisa de {need} tokens de entrada, mais do que toda a cota mensal desta chave ({limit}): não pode ser respondido com esta cota, nem agora nem depois. Envie menos perguntas, opções ou estado, ou mais curtos, ou aumente a cota.",
    fr: "Cette requête seule demande {need} jetons d'entrée, plus que tout le quota mensuel de cette clé ({limit}) : elle ne peut pas être traitée avec ce quota, ni maintenant ni plus tard. Envoyez moins de questions, d'options ou d'état, ou plus courts, ou augmentez le quota.",
    de: "Allein diese Anfrage benötigt {need} Eingabe-Tokens, mehr als das gesamte Monatskontingent dieses Schlüssels ({limit}): Mit diesem Kontingent kann sie weder jetzt noch später beantwortet werden. Senden Sie weniger oder kürzere Fragen und Optionen oder einen kürzeren Zustand, oder erhöhen Sie das Kontingent.",
  },
  model_loading: {
    en: "The model is loading; retry in a few seconds.",
    es: "El modelo se está cargando; reintente en unos segundos.",
    pt: "O modelo está carregando; tente novamente em alguns segundos.",
    fr: "Le modèle est en cours de chargement ; réessayez dans quelques secondes.",
    de: "Das Modell wird geladen; versuchen Sie es in einigen Sekunden erneut.",
  },
  model_failed: {
    en: "The model could not be loaded on this server; retry later.",
    es: "No se pudo cargar el modelo en este servidor; reintente más tarde.",
    pt: "Não foi possível carregar o modelo neste servidor; tente novamente mais tarde.",
    fr: "Le modèle n'a pas pu être chargé sur ce serveur ; réessayez plus tard.",
    de: "Das Modell konnte auf diesem Server nicht geladen werden; versuchen Sie es später erneut.",
  },
  shutting_down: {
    en: "The server is shutting down; retry in a few seconds.",
    es: "El servidor se está apagando; reintente en unos segundos.",
    pt: "O servidor está a desligar; tente novamente em alguns segundos.",
    fr: "Le serveur s'arrête ; réessayez dans quelques secondes.",
    de: "Der Server wird heruntergefahren; versuchen Sie es in einigen Sekunden erneut.",
  },
  internal: {
    en: "Internal error; the request was not billed.",
    es: "Error interno; la solicitud no se facturó.",
    pt: "Erro interno; o pedido não foi cobrado.",
    fr: "Erreur interne ; la requête n'a pas été facturée.",
    de: "Interner Fehler; die Anfrage wurde nicht berechnet.",
  },
  missing: {
    en: "Field required.",
    es: "Campo obligatorio.",
    pt: "Campo obrigatório.",
    fr: "Champ obligatoire.",
    de: "Feld erforderlich.",
  },
  string_type: {
    en: "Input should be a valid string.",
    es: "La entrada debe ser una cadena válida.",
    pt: "A entrada deve ser uma string válida.",
    fr: "L'entrée doit être une chaîne valide.",
    de: "Die Eingabe muss eine gültige Zeichenkette sein.",
  },
  string_or_null: {
    en: "Input should be a string or null.",
    es: "La entrada debe ser una cadena o null.",
    pt: "A entrada deve ser uma string ou null.",
    fr: "L'entrée doit être une chaîne ou null.",
    de: "Die Eingabe muss eine Zeichenkette oder null sein.",
  },
  dict_type: {
    en: "Input should be an object.",
    es: "La entrada debe ser un objeto.",
    pt: "A entrada deve ser um objeto.",
    fr: "L'entrée doit être un objet.",
    de: "Die Eingabe muss ein Objekt sein.",
  },
  number_range: {
    en: "Input should be a number from 0 to 1.",
    es: "La entrada debe ser un número entre 0 y 1.",
    pt: "A entrada deve ser um número entre 0 e 1.",
    fr: "L'entrée doit être un nombre entre 0 et 1.",
    de: "Die Eingabe muss eine Zahl von 0 bis 1 sein.",
  },
  text_value_type: {
    en: "Input should be a string, an object or an array.",
    es: "La entrada debe ser una cadena, un objeto o un array.",
    pt: "A entrada deve ser uma string, um objeto ou um array.",
    fr: "L'entrée doit être une chaîne, un objet ou un tableau.",
    de: "Die Eingabe muss eine Zeichenkette, ein Objekt oder ein Array sein.",
  },
  text_or_null_type: {
    en: "Input should be a string, an object, an array or null.",
    es: "La entrada debe ser una cadena, un objeto, un array o null.",
    pt: "A entrada deve ser uma string, um objeto, um array ou null.",
    fr: "L'entrée doit être une chaîne, un objet, un tableau ou null.",
    de: "Die Eingabe muss eine Zeichenkette, ein Objekt, ein Array oder null sein.",
  },
  question_type: {
    en: "Input should be {allowed}.",
    es: "La entrada debe ser {allowed}.",
    pt: "A entrada deve ser {allowed}.",
    fr: "L'entrée doit être {allowed}.",
    de: "Die Eingabe muss {allowed} sein.",
  },
  no_questions: {
    en: "At least one question is required.",
    es: "Se requiere al menos una pregunta.",
    pt: "É necessária pelo menos uma pergunta.",
    fr: "Au moins une question est requise.",
    de: "Mindestens eine Frage ist erforderlich.",
  },
  too_many_questions: {
    en: "At most {max} questions are allowed per request; got {n}.",
    es: "Se permiten como máximo {max} preguntas por solicitud; se recibieron {n}.",
    pt: "São permitidas no máximo {max} perguntas por pedido; foram recebidas {n}.",
    fr: "Au plus {max} questions sont autorisées par requête ; reçu {n}.",
    de: "Pro Anfrage sind höchstens {max} Fragen erlaubt; erhalten: {n}.",
  },
  empty_key: {
    en: "Question keys must be non-empty strings.",
    es: "Las claves de las preguntas deben ser cadenas no vacías.",
    pt: "As chaves das perguntas devem ser strings não vazias.",
    fr: "Les clés des questions doivent être des chaînes non vides.",
    de: "Die Schlüssel der Fragen müssen nicht leere Zeichenketten sein.",
  },
  choice_options: {
    en: "A Choice needs between 2 and 255 options; got {n}.",
    es: "Una Choice necesita entre 2 y 255 opciones; se recibieron {n}.",
    pt: "Uma Choice precisa de 2 a 255 opções; foram recebidas {n}.",
    fr: "Une Choice nécessite entre 2 et 255 options ; reçu {n}.",
    de: "Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: {n}.",
  },
  score_levels: {
    en: "A Score needs between 2 and 10 levels; got {n}.",
    es: "Un Score necesita entre 2 y 10 niveles; se recibieron {n}.",
    pt: "Um Score precisa de 2 a 10 níveis; foram recebidos {n}.",
    fr: "Un Score nécessite entre 2 et 10 niveaux ; reçu {n}.",
    de: "Ein Score benötigt zwischen 2 und 10 Stufen; erhalten: {n}.",
  },
  text_too_deep: {
    en: "Objects and arrays may be nested at most {max} levels deep here.",
    es: "Los objetos y arrays pueden anidarse como máximo {max} niveles aquí.",
    pt: "Objetos e arrays podem ser aninhados no máximo {max} níveis aqui.",
    fr: "Les objets et tableaux peuvent être imbriqués sur au plus {max} niveaux ici.",
    de: "Objekte und Arrays dürfen hier höchstens {max} Ebenen tief verschachtelt sein.",
  },
  instructions_too_long: {
    en: "Instructions may be at most {max} characters; got {n}.",
    es: "Las instrucciones pueden tener como máximo {max} caracteres; se recibieron {n}.",
    pt: "As instruções podem ter no máximo {max} caracteres; foram recebidos {n}.",
    fr: "Les instructions peuvent contenir au plus {max} caractères ; reçu {n}.",
    de: "Die Anweisungen dürfen höchstens {max} Zeichen lang sein; erhalten: {n}.",
  },
  noul_extra_key: {
    en: "Unexpected key '{key}': only 'true' and 'false' are allowed here.",
    es: "Clave inesperada '{key}': aquí solo se permiten 'true' y 'false'.",
    pt: "Chave inesperada '{key}': aqui só são permitidas 'true' e 'false'.",
    fr: "Clé inattendue '{key}' : seules 'true' et 'false' sont autorisées ici.",
    de: "Unerwarteter Schlüssel '{key}': Hier sind nur 'true' und 'false' erlaubt.",
  },
  noul_nothing: {
    en: "A yes/no question needs instructions or criteria: there is nothing to ask.",
    es: "Una pregunta de sí/no necesita instrucciones o criterios: no hay nada que preguntar.",
    pt: "Uma pergunta de sim/não precisa de instruções ou critérios: não há nada a perguntar.",
    fr: "Une question oui/non nécessite des instructions ou des critères : il n'y a rien à demander.",
    de: "Eine Ja/Nein-Frage benötigt Anweisungen oder Kriterien: Es gibt nichts zu fragen.",
  },
  duplicate_option: {
    en: "Duplicate option key '{key}'.",
    es: "Clave de opción duplicada '{key}'.",
    pt: "Chave de opção duplicada '{key}'.",
    fr: "Clé d'option en double '{key}'.",
    de: "Doppelter Optionsschlüssel '{key}'.",
  },
  choice_shape: {
    en: "Input should be an object of option key to description, or a list of option keys.",
    es: "La entrada debe ser un objeto de clave de opción a descripción, o una lista de claves.",
    pt: "A entrada deve ser um objeto de chave de opção para descrição, ou uma lista de chaves.",
    fr: "L'entrée doit être un objet associant une clé d'option à une description, ou une liste de clés d'option.",
    de: "Die Eingabe muss ein Objekt sein, das Optionsschlüssel auf Beschreibungen abbildet, oder eine Liste von Optionsschlüsseln.",
  },
  level_null: {
    en: "A level must be a string, an object or an array, not null.",
    es: "Un nivel debe ser una cadena, un objeto o un array, no null.",
    pt: "Um nível deve ser uma string, um objeto ou um array, não null.",
    fr: "Un niveau doit être une chaîne, un objet ou un tableau, pas null.",
    de: "Eine Stufe muss eine Zeichenkette, ein Objekt oder ein Array sein, nicht null.",
  },
  concurrency: {
    en: "This key already has {in_flight} question-option pairs in flight or waiting, and this request adds {pairs}; at most {limit} are allowed at once. Retry in {retry} s.",
    es: "Esta clave ya tiene {in_flight} pares pregunta-opción en curso o en espera, y esta solicitud añade {pairs}; se permiten como máximo {limit} a la vez. Reintente en {retry} s.",
    pt: "Esta chave já tem {in_flight} pares pergunta-opção em curso ou em espera, e este pedido acrescenta {pairs}; são permitidos no máximo {limit} de uma vez. Tente novamente em {retry} s.",
    fr: "Cette clé a déjà {in_flight} paires question-option en cours ou en attente, et cette requête en ajoute {pairs} ; au plus {limit} sont permises à la fois. Réessayez dans {retry} s.",
    de: "Für diesen Schlüssel sind bereits {in_flight} Frage-Option-Paare in Bearbeitung oder in der Warteschlange, und diese Anfrage fügt {pairs} hinzu; gleichzeitig sind höchstens {limit} erlaubt. Versuchen Sie es in {retry} s erneut.",
  },
  overloaded: {
    en: "The server is at capacity; retry in {retry} s.",
    es: "El servidor está al límite de su capacidad; reintente en {retry} s.",
    pt: "O servidor está no limite da sua capacidade; tente novamente em {retry} s.",
    fr: "Le serveur est à pleine capacité ; réessayez dans {retry} s.",
    de: "Der Server ist ausgelastet; versuchen Sie es in {retry} s erneut.",
  },
  dependency_unavailable: {
    en: "A service this server depends on is unavailable; the request was not served or billed. Retry in {retry} s.",
    es: "Un servicio del que depende este servidor no está disponible; la solicitud no se atendió ni se facturó. Reintente en {retry} s.",
    pt: "Um serviço de que este servidor depende está indisponível; o pedido não foi atendido nem cobrado. Tente novamente em {retry} s.",
    fr: "Un service dont dépend ce serveur est indisponible ; la requête n'a été ni traitée ni facturée. Réessayez dans {retry} s.",
    de: "Ein Dienst, von dem dieser Server abhängt, ist nicht verfügbar; die Anfrage wurde weder bearbeitet noch berechnet. Versuchen Sie es in {retry} s erneut.",
  },
  headers_timeout: {
    en: "The request headers did not arrive within {seconds} seconds.",
    es: "Las cabeceras de la solicitud no llegaron en {seconds} segundos.",
    pt: "Os cabeçalhos do pedido não chegaram em {seconds} segundos.",
    fr: "Les en-têtes de la requête ne sont pas arrivés en {seconds} secondes.",
    de: "Die Header der Anfrage sind nicht innerhalb von {seconds} Sekunden eingetroffen.",
  },
  problems_omitted: {
    en: "{omitted} more problems were found and are not listed.",
    es: "Se encontraron {omitted} problemas más que no se enumeran.",
    pt: "Foram encontrados mais {omitted} problemas que não são listados.",
    fr: "{omitted} autres problèmes ont été trouvés et ne sont pas listés.",
    de: "{omitted} weitere Probleme wurden gefunden und sind nicht aufgeführt.",
  },
  score_shape: {
    en: "Input should be a list of level descriptions, or an object with exactly the keys \"0\" to \"{last}\".",
    es: "La entrada debe ser una lista de descripciones de nivel, o un objeto con exactamente las claves \"0\" a \"{last}\".",
    pt: "A entrada deve ser uma lista de descrições de nível, ou um objeto com exatamente as chaves \"0\" a \"{last}\".",
    fr: "L'entrée doit être une liste de descriptions de niveau, ou un objet avec exactement les clés \"0\" à \"{last}\".",
    de: "Die Eingabe muss eine Liste von Stufenbeschreibungen sein oder ein Objekt mit genau den Schlüsseln \"0\" bis \"{last}\".",
  },
} satisfies Record<string, Catalog>;

export type MessageCode = keyof typeof MESSAGES;
export type Params = Record<string, string | number>;

export function message(code: MessageCode, lang: Lang, params: Params = {}): string {
  return MESSAGES[code][lang].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** Picks the best supported language from an Accept-Language header (q-values honoured; es-MX counts as es, de-AT as de). */
export function pickLanguage(header: string | undefined): Lang {
  if (!header) return "en";
  let best: Lang = "en";
  let bestQ = 0;
  for (const part of header.split(",")) {
    const [tag, ...params] = part.trim().split(";");
    const base = tag.trim().toLowerCase().split("-")[0];
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q) || q <= 0) continue;
    if ((LANGS as readonly string[]).includes(base) && q > bestQ) {
      best = base as Lang;
      bestQ = q;
    }
  }
  return best;
}
