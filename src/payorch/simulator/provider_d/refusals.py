"""The refusal reasons the hosted page can answer: Adyen's refusal-reason table
(docs.adyen.com, "Refusal reasons"), ``refusalReasonCode`` and its ``refusalReason`` as a refused
AUTHORISATION says it. Codes 1, 13 and 30 are results, not refusals. The page's select picks
one; the market's buyer and a reject that names none use ``REFUSED``."""

REFUSED = "2"
_TABLE = """0 Unknown|2 Refused|3 Referral|4 Acquirer Error|5 Blocked Card|6 Expired Card|7 Invalid Amount
8 Invalid Card Number|9 Issuer Unavailable|10 Not supported|11 3D Not Authenticated|12 Not enough balance
14 Acquirer Fraud|15 Cancelled|16 Shopper Cancelled|17 Invalid Pin|18 Pin tries exceeded
19 Pin validation not possible|20 FRAUD|21 Not Submitted|22 FRAUD-CANCELLED|23 Transaction Not Permitted
24 CVC Declined|25 Restricted Card|26 Revocation Of Auth|27 Declined Non Generic|28 Withdrawal amount exceeded
29 Withdrawal count exceeded|31 Issuer Suspected Fraud|32 AVS Declined|33 Card requires online pin
34 No checking account available on Card|35 No savings account available on Card|36 Mobile PIN required
37 Contactless fallback|38 Authentication required|39 RReq not received from DS
40 Current AID is in Penalty Box.|41 CVM Required Restart Payment|42 3DS Authentication Error
43 Online PIN required|44 Try another interface|45 Chip downgrade mode
46 Transaction blocked by Adyen to prevent excessive retry fees"""
REASONS = dict(row.split(" ", 1) for row in _TABLE.replace("\n", "|").split("|"))
