package snapshot

import (
	"strings"
	"unicode"
)

// The words sign-in detection reads, in English, French, German, Spanish, Italian,
// Portuguese and Dutch (and a few of the most common words of other languages). A phrase
// matches whole words of a text split into words (see words: at anything but a letter or a
// digit, and between a lower-case letter and an upper-case one), so "log in" matches
// "Log In", "log-in" and "logIn"; a phrase starting with "~" matches anywhere in the
// lower-cased text (scripts without spaces between words, and parts of compound words).

// purpose is what a group of fields is for.
type purpose uint8

const (
	signIn purpose = iota
	signUp
	changePassword
	forgotPassword
	newsletter
	checkout
	search
	nPurposes
)

var purposeNames = [nPurposes]string{"sign-in", "sign-up", "change-password", "forgot-password", "newsletter", "checkout", "search"}

func (p purpose) String() string { return purposeNames[p] }

// purposeWords are what a button, heading, title or form attribute says when it names a
// purpose.
var purposeWords = [nPurposes]phrases{
	signIn: newPhrases("log in", "login", "log on", "logon", "sign in", "signin", "sign on", "signon",
		"member login", "customer login", "access my account", "authenticate", "authentication", "auth",
		"connexion", "se connecter", "connecter", "connectez vous", "s identifier", "identifiez vous", "identification",
		"anmelden", "anmeldung", "einloggen", "login bereich",
		"iniciar sesión", "iniciar sesion", "inicia sesión", "inicia sesion", "acceder", "ingresar", "identificarse", "entrar",
		"accedi", "accesso", "entra",
		"iniciar sessão", "inicie sessão", "acessar", "aceder", "fazer login",
		"inloggen", "log je in", "aanmelden",
		"accedir", "iniciar sessió", "inicia sessió", "přihlásit", "přihlásit se", "přihlášení", "prihlásiť", "prihlásenie",
		"bejelentkezés", "belépés", "autentificare", "conectare", "log ind", "logg inn", "σύνδεση", "увійти", "đăng nhập",
		"masuk", "~เข้าสู่ระบบ", "~התחבר", "~تسجيل الدخول",
		"войти", "вход", "~ログイン", "~登录", "~登入", "~로그인", "giriş", "giriş yap", "zaloguj", "logga in", "kirjaudu",
		"enter password", "enter your password"),
	signUp: newPhrases("sign up", "signup", "register", "registration", "create account", "create an account",
		"createaccount", "newaccount", "new user", "newuser", "enrollment", "onboarding",
		"create my account", "create your account", "new account", "open an account", "join", "join now", "join free",
		"get started", "enroll", "enrol", "registrieren", "registrierung", "konto erstellen", "konto anlegen", "neues konto",
		"s inscrire", "inscrivez vous", "inscription", "créer un compte", "créer mon compte", "creer un compte",
		"registrarse", "regístrate", "registrate", "crear cuenta", "crear una cuenta", "crea tu cuenta",
		"registrati", "registrazione", "crea account", "crea un account", "iscriviti",
		"cadastre se", "cadastrar", "cadastro", "criar conta", "criar uma conta", "registar", "registe se",
		"registreren", "account aanmaken", "maak een account", "word lid",
		"регистрация", "зарегистрироваться", "~新規登録", "~注册", "~회원가입", "kayıt ol", "üye ol"),
	changePassword: newPhrases("change password", "change your password", "change my password", "update password",
		"update your password", "set a new password", "set new password", "choose a new password", "new password",
		"passwort ändern", "kennwort ändern", "neues passwort", "changer le mot de passe", "changer votre mot de passe",
		"nouveau mot de passe", "cambiar contraseña", "nueva contraseña", "cambia password", "nuova password",
		"alterar senha", "nova senha", "wachtwoord wijzigen", "nieuw wachtwoord"),
	forgotPassword: newPhrases("forgot", "forgotten", "forgot password", "reset password", "reset your password",
		"reset my password", "password reset", "reset", "recover", "recovery", "lost password", "send reset link",
		"trouble signing in", "trouble logging in", "can t sign in", "can t log in", "cannot sign in", "cannot log in",
		"need help signing in", "need help logging in", "не могу войти", "не удается войти", "passwort vergessen", "kennwort vergessen", "zurücksetzen",
		"wiederherstellen", "mot de passe oublié", "oublié", "réinitialiser", "reinitialiser", "réinitialisation",
		"récupérer", "olvidé", "olvide", "olvidaste", "olvidó", "restablecer", "recuperar", "dimenticata",
		"dimenticato", "reimposta", "recupera", "esqueci", "esqueceu", "redefinir", "vergeten", "herstellen",
		"opnieuw instellen", "забыли", "восстановить"),
	newsletter: newPhrases("newsletter", "newsletters", "subscribe", "subscription", "sign up for our", "get updates",
		"mailing list", "stay informed", "stay in touch", "abonnieren", "s abonner", "abonnez vous", "suscribirse",
		"suscríbete", "boletín", "iscriviti alla newsletter", "assinar", "inscreva se", "nieuwsbrief", "abonneren"),
	checkout: newPhrases("checkout", "check out", "place order", "place your order", "pay", "pay now", "payment",
		"billing", "shipping", "delivery", "continue to payment", "order summary", "guest", "book now", "donate",
		"kasse", "bezahlen", "zahlung", "bestellen", "commander", "payer", "paiement", "livraison", "pagar", "pago",
		"envío", "paga", "pagamento", "spedizione", "afrekenen", "betalen", "bestelling"),
	search: newPhrases("search", "find", "suchen", "suche", "rechercher", "recherche", "buscar", "búsqueda", "cerca",
		"ricerca", "pesquisar", "pesquisa", "zoeken", "zoek", "поиск"),
}

// Words of controls and fields that say something other than a purpose.
var (
	// nextWords are a first step's or a sign-in's submit control that names no purpose: the
	// words of going on to a next step (stepWords), or of sending any form.
	nextWords = newPhrases("next", "continue", "submit", "go", "ok", "proceed", "enter", "send", "verify",
		"weiter", "fortfahren", "absenden", "suivant", "continuer", "valider", "envoyer", "siguiente", "continuar",
		"enviar", "avanti", "continua", "invia", "próximo", "proximo", "seguinte", "prosseguir", "volgende",
		"doorgaan", "verder", "далее", "продолжить", "~次へ", "~下一步", "~다음")
	// stepWords are the nextWords of going on to a next step ("Next", not "Submit" or
	// "Send": a newsletter's, a contact form's, a guest checkout's words too).
	stepWords = newPhrases("next", "continue", "proceed", "weiter", "fortfahren", "suivant", "continuer",
		"siguiente", "continuar", "avanti", "continua", "próximo", "proximo", "seguinte", "prosseguir",
		"volgende", "doorgaan", "verder", "далее", "продолжить", "~次へ", "~下一步", "~다음")
	// notSubmitWords are controls that never submit a sign-in: a show-password toggle, another
	// provider's sign-in, a way back.
	notSubmitWords = newPhrases("show", "hide", "show password", "reveal", "toggle", "with google", "with facebook",
		"with apple", "with microsoft", "with twitter", "with linkedin", "with github", "with amazon", "with x",
		"with phone", "with email", "with sms", "with a passkey", "with passkey", "passkey", "google", "facebook",
		"apple", "cancel", "back", "close", "clear", "help", "language", "anzeigen", "afficher", "mostrar",
		"mostra", "tonen", "annuler", "abbrechen", "cancelar", "annulla", "annuleren", "zurück", "retour", "volver",
		"indietro", "voltar", "terug", "qr code", "magic link", "send code", "text me", "code by")
	// accountWords name the field that takes the account: a user name, an e-mail address, a
	// phone number, a member or customer number.
	accountWords = newPhrases("user", "username", "user name", "userid", "user id", "login", "login id", "loginid",
		"logon", "signin", "email", "e mail", "mail", "emailaddress", "account", "account number", "accountid",
		"member", "member id", "memberid", "membership", "customer", "customer number", "customer id", "client",
		"client id", "id", "identifier", "ident", "uid", "uname", "u name", "phone", "mobile", "tel", "msisdn", "access id",
		"accessid", "card number", "nickname", "handle", "sign in name", "login name", "logon name",
		"~benutzer", "kundennummer", "kennung", "~utilisateur", "identifiant", "courriel", "adresse e mail",
		"usuario", "usuário", "correo", "correo electrónico", "utente", "nome utente", "telefono", "telefone",
		"celular", "gebruiker", "gebruikersnaam", "e mailadres", "логин", "имя пользователя", "пользователь",
		"felhasználónév", "felhasználó", "uživatel", "uživatelské jméno", "používateľ", "użytkownik", "nazwa użytkownika",
		"kullanıcı adı", "brugernavn", "brukernavn", "användarnamn", "käyttäjätunnus",
		"~アカウント", "~账号", "~帐号", "~아이디")
	// newPasswordWords are a password field that takes a new password (a sign-up's, a
	// change's): its second copy included.
	newPasswordWords = newPhrases("new", "confirm", "confirmation", "repeat", "retype", "re enter", "again",
		"verify", "create", "choose", "neu", "neues", "bestätigen", "wiederholen", "nouveau", "confirmer",
		"confirmez", "nueva", "nuevo", "confirmar", "repetir", "nuova", "conferma", "ripeti", "nova", "novo",
		"nieuw", "bevestig", "herhaal", "password2", "pwd2", "pass2", "cpassword", "passwordconfirm")
	// currentPasswordWords are the old password of a change-password form.
	currentPasswordWords = newPhrases("current", "old", "existing", "aktuelles", "altes", "actuel", "ancien",
		"actual", "anterior", "attuale", "vecchia", "atual", "huidig", "oud")
	// secretWords are fields whose secret is not an account's password: an API key or token, a
	// webhook or signing secret. A password field so named is a settings field.
	secretFieldWords = newPhrases("api key", "apikey", "api token", "api secret", "webhook", "signing secret",
		"client secret", "secret key", "access key", "private key", "access token", "cvv", "cvc", "csc")
	// weakSecretWords name a secret field too, unless its label says password (a site's own
	// name for its password field: "ego_secret" labelled "Heslo").
	weakSecretWords = newPhrases("secret")
	// passwordWords are a password field's label, in several languages.
	passwordWords = newPhrases("password", "passwort", "kennwort", "mot de passe", "contraseña", "contrasena",
		"clave", "senha", "wachtwoord", "parola", "heslo", "hasło", "jelszó", "parool", "passord", "adgangskode",
		"lösenord", "salasana", "şifre", "пароль", "~パスワード", "~密码", "~密碼", "~비밀번호")
	// codeFieldWords are a password-typed field that takes a one-time code, a second factor
	// beside the password: never the password, never a second password.
	codeFieldWords = newPhrases("mfa", "mfa code", "mfacode", "otp", "totp", "2fa", "one time code", "one time password",
		"verification code", "authenticator", "authentication code", "token code", "security token")
	// rememberWords are a sign-in's "keep me signed in" checkbox.
	rememberWords = newPhrases("remember", "remember me", "keep me signed in", "keep me logged in", "stay signed in",
		"stay logged in", "angemeldet bleiben", "se souvenir", "rester connecté", "recordar", "recuérdame",
		"ricordami", "lembrar", "manter conectado", "onthoud", "ingelogd blijven")
	// haveAccountWords are a sign-up's way to the sign-in ("Already have an account?").
	haveAccountWords = newPhrases("already have an account", "already a member", "already registered",
		"have an account", "already have an", "déjà un compte", "déjà inscrit", "déjà membre", "bereits ein konto",
		"schon ein konto", "bereits registriert", "ya tienes una cuenta", "ya tienes cuenta", "ya eres miembro",
		"hai già un account", "sei già registrato", "já tem uma conta", "já tem conta", "já é membro",
		"al een account", "heb je al een account", "уже есть аккаунт")
	// noAccountWords are a sign-in's way to the sign-up ("Don't have an account?").
	noAccountWords = newPhrases("don t have an account", "dont have an account", "do not have an account",
		"no account", "not a member", "new to", "new here", "new user", "new customer", "need an account",
		"create one", "pas de compte", "pas encore de compte", "pas encore membre", "nouveau client",
		"kein konto", "noch kein konto", "neu hier", "neukunde", "no tienes cuenta", "no tienes una cuenta",
		"nuevo usuario", "non hai un account", "non sei registrato", "nuovo utente", "não tem uma conta",
		"não tem conta", "novo usuário", "geen account", "nog geen account", "nieuwe klant", "нет аккаунта")
	// passwordRuleWords are a new password's rules, shown beside a sign-up's password field.
	passwordRuleWords = newPhrases("at least 8 characters", "at least 6 characters", "at least 10 characters",
		"at least 12 characters", "characters long", "special character", "special characters", "uppercase",
		"lowercase", "one number", "one letter", "password strength", "password must", "mindestens 8 zeichen",
		"sonderzeichen", "großbuchstaben", "au moins 8 caractères", "caractère spécial", "majuscule",
		"al menos 8 caracteres", "carácter especial", "mayúscula", "almeno 8 caratteri", "carattere speciale",
		"maiuscola", "pelo menos 8 caracteres", "caractere especial", "maiúscula", "minimaal 8 tekens",
		"hoofdletter", "speciaal teken")
	// termsWords are a sign-up's consent checkbox.
	termsWords = newPhrases("terms", "i agree", "agree", "privacy policy", "conditions", "accept", "consent",
		"agb", "datenschutz", "j accepte", "acepto", "accetto", "aceito", "akkoord", "voorwaarden")
	// personWords are a sign-up's or a checkout's details fields.
	personWords = newPhrases("first name", "firstname", "fname", "given name", "last name", "lastname", "lname",
		"surname", "family name", "full name", "fullname", "display name", "public name", "profile name", "birthday", "birth", "dob", "date of birth",
		"address", "street", "city", "zip", "zipcode", "postcode", "postal", "country", "gender", "vorname",
		"nachname", "geburtsdatum", "prénom", "naissance", "apellido", "nacimiento", "cognome",
		"nascita", "sobrenome", "nascimento", "voornaam", "achternaam", "geboortedatum")
	// namedOnlyWords are a field called just "name": a person's (a sign-up's) or the account's
	// (a user name), told apart by where it is.
	namedOnlyWords = newPhrases("name", "nom", "nombre", "nome", "naam", "jméno", "имя")
)

// phrases is a list of phrases, each as its words joined by single spaces, or a "~" substring.
type phrases struct {
	whole []string // " w1 w2 " forms
	parts []string // substrings
}

func newPhrases(list ...string) phrases {
	var p phrases
	for _, s := range list {
		if rest, ok := strings.CutPrefix(s, "~"); ok {
			p.parts = append(p.parts, strings.ToLower(rest))
			continue
		}
		p.whole = append(p.whole, " "+strings.Join(words(s), " ")+" ")
	}
	return p
}

// text is a string prepared for matching: its words, and its lower-cased form.
type text struct {
	joined string // " w1 w2 … "
	lower  string
}

func prepare(s string) text {
	if s == "" {
		return text{}
	}
	return text{joined: " " + strings.Join(words(s), " ") + " ", lower: strings.ToLower(s)}
}

func (p phrases) match(t text) bool {
	if t.lower == "" {
		return false
	}
	for _, w := range p.whole {
		if strings.Contains(t.joined, w) {
			return true
		}
	}
	for _, w := range p.parts {
		if strings.Contains(t.lower, w) {
			return true
		}
	}
	return false
}

// matchAny reports whether any of ss matches.
func (p phrases) matchAny(ss ...string) bool {
	for _, s := range ss {
		if p.match(prepare(s)) {
			return true
		}
	}
	return false
}

// words splits s into lower-case words at anything but letters and digits, and where a lower-case
// letter is followed by an upper-case one ("apiKey" → api, key).
func words(s string) []string {
	var out []string
	var cur []rune
	var prevLower bool
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if prevLower && unicode.IsUpper(r) {
				flush()
			}
			cur = append(cur, r)
			prevLower = unicode.IsLower(r)
		default:
			flush()
			prevLower = false
		}
		if len(out) > 64 {
			break
		}
	}
	flush()
	return out
}
