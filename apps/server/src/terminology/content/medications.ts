/**
 * Terminology part `medications`: a subset of RxNorm's prescribable clinical drugs (SCD) for the
 * prescribing screens, their RxNorm ingredients, and the allergen codes each drug answers to.
 *
 * Licence basis: RxNorm's prescribable content (the "RxNorm Current Prescribable Content" subset)
 * is published by the U.S. National Library of Medicine without a UMLS licence; the SNOMED CT
 * codes used here are substances of the SNOMED International IPS free set.
 *
 * The drug codes and names are RxNorm's (RXCUI, normalized name); almost all are the ones the
 * Synthea R4 sample population prescribes, the rest well-known SCDs. RxNorm is large and changes
 * monthly: `content: 'fragment'` keeps any other RxNorm code valid.
 */
import type { CodeSystem, ConceptMap, Resource, ValueSet } from '@hearth/core';

export const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm';
export const SNOMED = 'http://snomed.info/sct';
export const MEDICATIONS_VALUE_SET = 'https://hearth.dev/fhir/ValueSet/medications';
export const MEDICATION_ALLERGENS_MAP = 'https://hearth.dev/fhir/ConceptMap/medication-allergens';
/** The CodeSystem property naming a drug's RxNorm ingredient (RxNorm's has_ingredient relation). */
export const HAS_INGREDIENT = 'has_ingredient';

/** RxNorm ingredients (TTY IN), by name, with the SNOMED substance where the IPS free set has one. */
const INGREDIENTS: Record<string, { rxcui: string; snomed?: [string, string] }> = {
  acetaminophen: { rxcui: '161', snomed: ['387517004', 'Paracetamol (substance)'] },
  albuterol: { rxcui: '435' },
  alendronate: { rxcui: '46041' },
  amlodipine: { rxcui: '17767' },
  amoxicillin: { rxcui: '723', snomed: ['372687004', 'Amoxicillin (substance)'] },
  anastrozole: { rxcui: '84857' },
  aspirin: { rxcui: '1191', snomed: ['387458008', 'Aspirin (substance)'] },
  atorvastatin: { rxcui: '83367' },
  atropine: { rxcui: '1223' },
  carvedilol: { rxcui: '20352' },
  cetirizine: { rxcui: '20610' },
  clavulanate: { rxcui: '48203' },
  clopidogrel: { rxcui: '32968' },
  codeine: { rxcui: '2670' },
  digoxin: { rxcui: '3407' },
  diphenhydramine: { rxcui: '3498' },
  donepezil: { rxcui: '135447' },
  epinephrine: { rxcui: '3992' },
  fentanyl: { rxcui: '4337' },
  'ferrous sulfate': { rxcui: '24947' },
  fexofenadine: { rxcui: '87636' },
  fluticasone: { rxcui: '41126' },
  furosemide: { rxcui: '4603' },
  galantamine: { rxcui: '4637' },
  hydrochlorothiazide: { rxcui: '5487' },
  hydrocodone: { rxcui: '5489' },
  hydrocortisone: { rxcui: '5492' },
  ibuprofen: { rxcui: '5640', snomed: ['387207008', 'Ibuprofen (substance)'] },
  lisinopril: { rxcui: '29046' },
  loratadine: { rxcui: '28889' },
  memantine: { rxcui: '6719' },
  meperidine: { rxcui: '6754' },
  metformin: { rxcui: '6809' },
  methotrexate: { rxcui: '6851' },
  naproxen: { rxcui: '7258' },
  nitrofurantoin: { rxcui: '7454' },
  nitroglycerin: { rxcui: '4917' },
  oxycodone: { rxcui: '7804' },
  'penicillin V': { rxcui: '7984' },
  prednisone: { rxcui: '8640' },
  pregabalin: { rxcui: '187832' },
  salmeterol: { rxcui: '36117' },
  sertraline: { rxcui: '36437' },
  simvastatin: { rxcui: '36567' },
  tramadol: { rxcui: '10689' },
  warfarin: { rxcui: '11289' },
};

/**
 * Allergen classes: a SNOMED substance a patient's AllergyIntolerance may name instead of the
 * drug, and the ingredients it covers (a penicillin allergy covers amoxicillin).
 */
const CLASSES: { code: string; display: string; ingredients: string[] }[] = [
  {
    code: '373270004',
    display: 'Substance with penicillin structure and antibacterial mechanism of action (substance)',
    ingredients: ['amoxicillin', 'penicillin V'],
  },
];

/** The drugs: RXCUI, RxNorm name, ingredient names (keys of INGREDIENTS). */
const DRUGS: [string, string, string[]][] = [
  // Anti-infectives
  ['308182', 'amoxicillin 250 MG Oral Capsule', ['amoxicillin']],
  ['308191', 'amoxicillin 500 MG Oral Capsule', ['amoxicillin']],
  ['308192', 'amoxicillin 500 MG Oral Tablet', ['amoxicillin']],
  ['562251', 'amoxicillin 250 MG / clavulanate 125 MG Oral Tablet', ['amoxicillin', 'clavulanate']],
  ['834061', 'penicillin V potassium 250 MG Oral Tablet', ['penicillin V']],
  ['834102', 'penicillin V potassium 500 MG Oral Tablet', ['penicillin V']],
  ['311989', 'nitrofurantoin 5 MG/ML Oral Suspension', ['nitrofurantoin']],
  // Pain and inflammation
  ['313782', 'acetaminophen 325 MG Oral Tablet', ['acetaminophen']],
  ['313820', 'acetaminophen 160 MG Chewable Tablet', ['acetaminophen']],
  ['198405', 'ibuprofen 100 MG Oral Tablet', ['ibuprofen']],
  ['310965', 'ibuprofen 200 MG Oral Tablet', ['ibuprofen']],
  ['198014', 'naproxen 500 MG Oral Tablet', ['naproxen']],
  ['849574', 'naproxen sodium 220 MG Oral Tablet', ['naproxen']],
  ['243670', 'aspirin 81 MG Oral Tablet', ['aspirin']],
  ['835603', 'tramadol hydrochloride 50 MG Oral Tablet', ['tramadol']],
  ['856987', 'acetaminophen 300 MG / hydrocodone bitartrate 5 MG Oral Tablet', ['acetaminophen', 'hydrocodone']],
  ['993770', 'acetaminophen 300 MG / codeine phosphate 15 MG Oral Tablet', ['acetaminophen', 'codeine']],
  ['1049221', 'acetaminophen 325 MG / oxycodone hydrochloride 5 MG Oral Tablet', ['acetaminophen', 'oxycodone']],
  ['1860491', '12 HR hydrocodone bitartrate 10 MG Extended Release Oral Capsule', ['hydrocodone']],
  ['861467', 'meperidine hydrochloride 50 MG Oral Tablet', ['meperidine']],
  ['245134', '72 HR fentanyl 0.025 MG/HR Transdermal System', ['fentanyl']],
  ['483438', 'pregabalin 100 MG Oral Capsule', ['pregabalin']],
  ['312617', 'prednisone 5 MG Oral Tablet', ['prednisone']],
  ['105585', 'methotrexate 2.5 MG Oral Tablet', ['methotrexate']],
  ['106258', 'hydrocortisone 10 MG/ML Topical Cream', ['hydrocortisone']],
  // Cardiovascular
  ['197361', 'amlodipine 5 MG Oral Tablet', ['amlodipine']],
  ['308136', 'amlodipine 2.5 MG Oral Tablet', ['amlodipine']],
  ['314076', 'lisinopril 10 MG Oral Tablet', ['lisinopril']],
  ['314077', 'lisinopril 20 MG Oral Tablet', ['lisinopril']],
  ['310798', 'hydrochlorothiazide 25 MG Oral Tablet', ['hydrochlorothiazide']],
  ['313988', 'furosemide 40 MG Oral Tablet', ['furosemide']],
  ['617312', 'atorvastatin 10 MG Oral Tablet', ['atorvastatin']],
  ['617310', 'atorvastatin 20 MG Oral Tablet', ['atorvastatin']],
  ['259255', 'atorvastatin 80 MG Oral Tablet', ['atorvastatin']],
  ['314231', 'simvastatin 10 MG Oral Tablet', ['simvastatin']],
  ['312961', 'simvastatin 20 MG Oral Tablet', ['simvastatin']],
  ['309362', 'clopidogrel 75 MG Oral Tablet', ['clopidogrel']],
  ['855332', 'warfarin sodium 5 MG Oral Tablet', ['warfarin']],
  ['197604', 'digoxin 0.125 MG Oral Tablet', ['digoxin']],
  ['200033', 'carvedilol 25 MG Oral Tablet', ['carvedilol']],
  ['705129', 'nitroglycerin 0.4 MG/ACTUAT Mucosal Spray', ['nitroglycerin']],
  // Diabetes
  ['860975', '24 HR metformin hydrochloride 500 MG Extended Release Oral Tablet', ['metformin']],
  // Mental health
  ['312940', 'sertraline 25 MG Oral Tablet', ['sertraline']],
  ['312941', 'sertraline 50 MG Oral Tablet', ['sertraline']],
  ['312938', 'sertraline 100 MG Oral Tablet', ['sertraline']],
  // Respiratory and allergy
  ['745679', '200 ACTUAT albuterol 0.09 MG/ACTUAT Metered Dose Inhaler', ['albuterol']],
  ['895994', '120 ACTUAT fluticasone propionate 0.044 MG/ACTUAT Metered Dose Inhaler', ['fluticasone']],
  [
    '896209',
    '60 ACTUAT fluticasone propionate 0.25 MG/ACTUAT / salmeterol 0.05 MG/ACTUAT Dry Powder Inhaler',
    ['fluticasone', 'salmeterol'],
  ],
  ['665078', 'loratadine 5 MG Chewable Tablet', ['loratadine']],
  ['1014676', 'cetirizine hydrochloride 5 MG Oral Tablet', ['cetirizine']],
  ['997488', 'fexofenadine hydrochloride 30 MG Oral Tablet', ['fexofenadine']],
  ['1049630', 'diphenhydramine hydrochloride 25 MG Oral Tablet', ['diphenhydramine']],
  ['1660014', '1 ML epinephrine 1 MG/ML Injection', ['epinephrine']],
  ['1190795', 'atropine sulfate 1 MG/ML Injectable Solution', ['atropine']],
  // Other
  ['310325', 'ferrous sulfate 325 MG Oral Tablet', ['ferrous sulfate']],
  ['904419', 'alendronic acid 10 MG Oral Tablet', ['alendronate']],
  ['199224', 'anastrozole 1 MG Oral Tablet', ['anastrozole']],
  ['997223', 'donepezil hydrochloride 10 MG Oral Tablet', ['donepezil']],
  ['310436', 'galantamine 4 MG Oral Tablet', ['galantamine']],
  ['996740', 'memantine hydrochloride 2 MG/ML Oral Solution', ['memantine']],
];

function ingredient(name: string): { rxcui: string; snomed?: [string, string] } {
  const found = INGREDIENTS[name];
  if (!found) throw new Error(`medications terminology: unknown ingredient ${name}`);
  return found;
}

const codeSystem: CodeSystem = {
  resourceType: 'CodeSystem',
  id: 'hearth-rxnorm-medications',
  url: RXNORM,
  name: 'RxNormMedicationsSubset',
  title: 'RxNorm (prescribable drugs and their ingredients, a subset)',
  status: 'active',
  content: 'fragment',
  publisher: 'U.S. National Library of Medicine',
  description:
    "Clinical drugs (SCD) Hearth's prescribing screens offer, and their ingredients (IN), from RxNorm's prescribable content.",
  property: [
    {
      code: HAS_INGREDIENT,
      uri: 'http://www.nlm.nih.gov/research/umls/rxnorm#has_ingredient',
      description: "The drug's active ingredient (RxNorm relation has_ingredient)",
      type: 'code',
    },
    { code: 'tty', description: 'RxNorm term type (SCD clinical drug, IN ingredient)', type: 'string' },
  ],
  concept: [
    ...DRUGS.map(([code, display, ingredients]) => ({
      code,
      display,
      property: [
        { code: 'tty', valueString: 'SCD' },
        ...ingredients.map((name) => ({ code: HAS_INGREDIENT, valueCode: ingredient(name).rxcui })),
      ],
    })),
    ...Object.entries(INGREDIENTS).map(([display, { rxcui }]) => ({
      code: rxcui,
      display,
      property: [{ code: 'tty', valueString: 'IN' }],
    })),
  ],
};

const valueSet: ValueSet = {
  resourceType: 'ValueSet',
  id: 'hearth-medications',
  url: MEDICATIONS_VALUE_SET,
  name: 'Medications',
  title: 'Prescribable medications (RxNorm clinical drugs)',
  status: 'active',
  description: 'The RxNorm clinical drugs offered when prescribing (MedicationRequest.medicationCodeableConcept).',
  compose: {
    include: [{ system: RXNORM, concept: DRUGS.map(([code, display]) => ({ code, display })) }],
  },
};

/** For each drug, the allergen codes that name it: its ingredients (RxNorm, SNOMED) and classes. */
export function allergensOf(rxcui: string): { system: string; code: string; display: string }[] {
  const drug = DRUGS.find(([code]) => code === rxcui);
  if (!drug) return [];
  const out: { system: string; code: string; display: string }[] = [];
  for (const name of drug[2]) {
    const found = ingredient(name);
    out.push({ system: RXNORM, code: found.rxcui, display: name });
    if (found.snomed) out.push({ system: SNOMED, code: found.snomed[0], display: found.snomed[1] });
    for (const cls of CLASSES) {
      if (cls.ingredients.includes(name) && !out.some((o) => o.code === cls.code)) {
        out.push({ system: SNOMED, code: cls.code, display: cls.display });
      }
    }
  }
  return out;
}

const conceptMap: ConceptMap = {
  resourceType: 'ConceptMap',
  id: 'hearth-medication-allergens',
  url: MEDICATION_ALLERGENS_MAP,
  name: 'MedicationAllergens',
  title: 'Medication to allergen codes',
  status: 'active',
  description:
    "Maps each prescribable drug (RxNorm SCD) to the codes a patient's AllergyIntolerance.code may carry for it: its RxNorm ingredients, their SNOMED CT substances and the substance classes covering them (penicillins). Used by the allergy check before a prescription is signed ($translate).",
  group: [RXNORM, SNOMED].map((targetSystem) => ({
    source: RXNORM,
    target: targetSystem,
    element: DRUGS.map(([code, display]) => ({
      code,
      display,
      target: allergensOf(code)
        .filter((a) => a.system === targetSystem)
        .map((a) => ({ code: a.code, display: a.display, equivalence: 'wider' as const })),
    })).filter((e) => e.target.length > 0),
  })),
};

/** The part's one Bundle (type collection), loaded once per database by terminology/loader.ts. */
export const MEDICATIONS_TERMINOLOGY = {
  resourceType: 'Bundle',
  type: 'collection',
  entry: [codeSystem, valueSet, conceptMap].map((resource) => ({ resource: resource as Resource })),
};
