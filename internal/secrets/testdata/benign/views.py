from django.contrib.auth import authenticate


def login_view(request):
    password = request.POST.get("password")
    user = authenticate(request, username=request.POST["username"], password=password)
    token, _ = Token.objects.get_or_create(user=user)
    return JsonResponse({"token": token.key, "token_type": "bearer"})


def connect(host, user, password=None, api_key=None, **kwargs):
    return Client(host=host, user=user, password=password, api_key=api_key)
